#!/usr/bin/env bash
# Build (once per machine) the kube-apiserver and etcd binaries that envtest
# runs, and print where they are:
#
#   eval "$(hack/setup-envtest.sh)"   # exports KUBEBUILDER_ASSETS
#
# No binary download site is needed: both servers are compiled from their
# published Go modules through the module proxy.
#   - kube-apiserver comes from k8s.io/kubernetes at KUBERNETES_VERSION. Its
#     go.mod points every k8s.io staging module at ./staging/src, which the
#     published module does not contain, so a private copy of the source gets
#     those replaces rewritten to the published v0.x versions. The version
#     ldflags make the server report its real version.
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

# staging_version maps v1.X.Y to the staging modules' v0.X.Y.
staging_version() { printf 'v0.%s\n' "${KUBERNETES_VERSION#v1.}"; }

build_apiserver() {
	local out="$1" work="$2"
	local staged src minor
	staged="$(staging_version)"
	log "downloading k8s.io/kubernetes@$KUBERNETES_VERSION"
	src="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	[[ -d "$src" ]] || die "go mod download k8s.io/kubernetes@$KUBERNETES_VERSION gave no source directory"
	cp -r "$src" "$work/kubernetes"
	chmod -R u+w "$work/kubernetes"
	sed -i -E "s#^([[:space:]]*k8s\.io/[a-z0-9-]+) => \./staging/src/k8s\.io/[a-z0-9-]+\$#\1 => \1 $staged#" \
		"$work/kubernetes/go.mod"
	if grep -q '=> ./staging' "$work/kubernetes/go.mod"; then
		die "some staging replaces were not rewritten in k8s.io/kubernetes' go.mod"
	fi
	minor="${KUBERNETES_VERSION#v1.}"
	minor="${minor%%.*}"
	local pkg=k8s.io/component-base/version
	local ldflags="-s -w -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
	ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	log "building kube-apiserver $KUBERNETES_VERSION (many minutes on a small machine)"
	(cd "$work/kubernetes" && CGO_ENABLED=0 GOFLAGS=-mod=mod GOWORK=off \
		go build -trimpath -ldflags "$ldflags" -o "$out/kube-apiserver" ./cmd/kube-apiserver)
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
		build_etcd "$work/out" "$work"
		build_apiserver "$work/out" "$work"
		rm -rf "$dir"
		mv "$work/out" "$dir"
		log "built both binaries into $dir in $((SECONDS - start)) s"
	fi
	printf 'export KUBEBUILDER_ASSETS=%q\n' "$dir"
}

main "$@"
