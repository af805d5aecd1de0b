#!/usr/bin/env bash
# Build (once per machine) the kube-apiserver and etcd binaries that envtest
# runs, and print where they are:
#
#   eval "$(hack/setup-envtest.sh)"   # exports KUBEBUILDER_ASSETS
#
# No binary download site is needed: both servers are compiled from their
# published Go modules through the module proxy.
#   - kube-apiserver comes from k8s.io/kubernetes at KUBERNETES_VERSION,
#     built by k8s-build.sh.
#   - etcd is a two-line main over go.etcd.io/etcd/server/v3/etcdmain.
#
# The binaries go to $SMS_ENVTEST_DIR (default: the user's cache directory,
# under sms-envtest), in a subdirectory named after both versions, and are
# reused from then on. A cold build takes 15-20 minutes on 2 cores; progress
# goes to stderr. If KUBEBUILDER_ASSETS already names a directory holding
# both binaries (for example one filled by the upstream setup-envtest tool),
# it is used as is and nothing is built.
#
# Only the export line goes to stdout.
set -euo pipefail

readonly KUBERNETES_VERSION="${KUBERNETES_VERSION:-v1.37.2}"
readonly ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"

# shellcheck source=hack/k8s-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/k8s-build.sh"

log() { printf 'setup-envtest.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

has_assets() { [[ -x "$1/kube-apiserver" && -x "$1/etcd" ]]; }

cache_root() {
	if [[ -n "${SMS_ENVTEST_DIR:-}" ]]; then
		printf '%s\n' "$SMS_ENVTEST_DIR"
	else
		printf '%s\n' "${XDG_CACHE_HOME:-$HOME/.cache}/sms-envtest"
	fi
}

build_etcd() {
	local out="$1" work="$2"
	mkdir -p "$work/etcd"
	cat >"$work/etcd/main.go" <<'EOF'
// Command etcd runs the etcd server for envtest.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
	log "building etcd $ETCD_VERSION"
	(
		cd "$work/etcd"
		export GOWORK=off CGO_ENABLED=0
		go mod init sms-envtest/etcd >/dev/null 2>&1
		go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
		go mod tidy >&2
		go build -trimpath -ldflags "-s -w" -o "$out/etcd" .
	)
}

main() {
	if [[ -n "${KUBEBUILDER_ASSETS:-}" ]] && has_assets "$KUBEBUILDER_ASSETS"; then
		printf 'export KUBEBUILDER_ASSETS=%q\n' "$KUBEBUILDER_ASSETS"
		return
	fi
	command -v go >/dev/null || die "go is not on PATH"
	local root dir
	root="$(cache_root)"
	dir="$root/k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION"
	mkdir -p "$root"
	# One builder at a time; a second caller waits and then reuses the result.
	exec 9>"$root/.lock"
	flock 9
	if ! has_assets "$dir"; then
		local work start
		work="$(mktemp -d "$root/build.XXXXXX")"
		# shellcheck disable=SC2064 # expand now: work is local to main
		trap "rm -rf '$work'" EXIT
		start=$SECONDS
		mkdir -p "$work/out"
		# etcd builds beside kube-apiserver: its downloads and link fill the
		# gaps of the larger build.
		build_etcd "$work/out" "$work" &
		local etcd=$!
		k8s_build "$work/out" "$work" kube-apiserver
		wait "$etcd" || die "building etcd failed"
		rm -rf "$dir"
		mv "$work/out" "$dir"
		log "built both binaries into $dir in $((SECONDS - start)) s"
	fi
	printf 'export KUBEBUILDER_ASSETS=%q\n' "$dir"
}

main "$@"
