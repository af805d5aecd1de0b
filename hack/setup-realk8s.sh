#!/usr/bin/env bash
# Build (once per machine) what a real one-node Kubernetes cluster needs
# beyond envtest's servers, and print where it is:
#
#   eval "$(hack/setup-realk8s.sh)"   # exports SMS_REALK8S_BIN
#
# - kubelet, kube-controller-manager, kube-scheduler and kube-proxy are
#   compiled from k8s.io/kubernetes at the envtest version through the Go
#   module proxy (k8s-build.sh), into $SMS_REALK8S_DIR (default: the user's
#   cache directory, under sms-realk8s), in a subdirectory named after the
#   version, under a lock, and reused from then on. kube-apiserver and etcd
#   are envtest's (setup-envtest.sh builds them when missing), linked in.
#   CoreDNS (COREDNS_VERSION) is built from its module the same way, and
#   pause, the pod sandbox's process, from a few lines written here. Each
#   missing binary is built; the others are reused.
# - containerd, runc, the CNI plugins, iptables and conntrack come from
#   Debian's packages, installed here when missing.
#
# Only the export line goes to stdout; progress goes to stderr.
set -euo pipefail

readonly KUBERNETES_VERSION="${KUBERNETES_VERSION:-v1.37.2}"
readonly COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
readonly COMPONENTS=(kubelet kube-controller-manager kube-scheduler kube-proxy)
readonly HACK="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=hack/k8s-build.sh
source "$HACK/k8s-build.sh"
# shellcheck source=hack/apt.sh
source "$HACK/apt.sh"

log() { printf 'setup-realk8s.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# packages installs the Debian packages the node runs on, when missing.
packages() {
	local missing=()
	command -v containerd >/dev/null || missing+=(containerd)
	command -v runc >/dev/null || missing+=(runc)
	[[ -x /usr/lib/cni/bridge ]] || missing+=(containernetworking-plugins)
	command -v iptables >/dev/null || missing+=(iptables)
	command -v conntrack >/dev/null || missing+=(conntrack)
	command -v nsenter >/dev/null || missing+=(util-linux)
	command -v ip >/dev/null || missing+=(iproute2)
	command -v openssl >/dev/null || missing+=(openssl)
	((${#missing[@]} == 0)) && return
	[[ $EUID -eq 0 ]] || die "installing ${missing[*]} needs root"
	log "installing ${missing[*]} from Debian's packages"
	apt_get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt_get install -y -qq "${missing[@]}" >&2
}

# missing DIR lists the binaries DIR still lacks.
missing() {
	local c
	for c in "${COMPONENTS[@]}" pause coredns; do
		[[ -x "$1/$c" ]] || printf '%s\n' "$c"
	done
}

# build_pause writes the pod sandbox's one process: it waits for SIGTERM
# or SIGINT and exits 0. No pause image can be pulled here.
build_pause() {
	local out="$1" work="$2"
	mkdir -p "$work/pause"
	cat >"$work/pause/main.go" <<'GO'
// Command pause holds a pod's namespaces until the kubelet stops it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
GO
	(cd "$work/pause" && GOWORK=off CGO_ENABLED=0 go mod init sms-realk8s/pause >/dev/null 2>&1 &&
		GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/pause" .)
}

# build_coredns builds CoreDNS, which resolves Service names in the cluster
# (the operator reaches kernels at <tenant>-kernel.<namespace>.svc).
build_coredns() {
	local out="$1" work="$2"
	log "building coredns $COREDNS_VERSION (long on a small machine)"
	GOWORK=off CGO_ENABLED=0 GOBIN="$work/gobin" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
	mv "$work/gobin/coredns" "$out/coredns"
}

main() {
	command -v go >/dev/null || die "go is not on PATH"
	packages
	eval "$("$HACK/setup-envtest.sh")"
	local root dir
	root="${SMS_REALK8S_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sms-realk8s}"
	dir="$root/k8s-$KUBERNETES_VERSION-coredns-$COREDNS_VERSION"
	mkdir -p "$root" "$dir"
	exec 9>"$root/.lock"
	flock 9
	local todo=() c k8s=()
	mapfile -t todo < <(missing "$dir")
	if ((${#todo[@]} > 0)); then
		local work start
		work="$(mktemp -d "$root/build.XXXXXX")"
		# shellcheck disable=SC2064 # expand now: work is local to main
		trap "rm -rf '$work'" EXIT
		start=$SECONDS
		mkdir -p "$work/out"
		for c in "${todo[@]}"; do
			case "$c" in
			pause) build_pause "$work/out" "$work" ;;
			coredns) build_coredns "$work/out" "$work" ;;
			*) k8s+=("$c") ;;
			esac
		done
		((${#k8s[@]} == 0)) || k8s_build "$work/out" "$work" "${k8s[@]}"
		mv "$work/out/"* "$dir/"
		log "built ${todo[*]} into $dir in $((SECONDS - start)) s"
	fi
	ln -sfn "$KUBEBUILDER_ASSETS/kube-apiserver" "$dir/kube-apiserver"
	ln -sfn "$KUBEBUILDER_ASSETS/etcd" "$dir/etcd"
	printf 'export SMS_REALK8S_BIN=%q\n' "$dir"
}

main "$@"
