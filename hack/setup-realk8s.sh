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
# - containerd, runc, the CNI plugins, iptables and conntrack come from
#   Debian's packages, installed here when missing.
#
# Only the export line goes to stdout; progress goes to stderr.
set -euo pipefail

readonly KUBERNETES_VERSION="${KUBERNETES_VERSION:-v1.37.2}"
readonly COMPONENTS=(kubelet kube-controller-manager kube-scheduler kube-proxy)
readonly HACK="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=hack/k8s-build.sh
source "$HACK/k8s-build.sh"

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
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
}

has_all() {
	local c
	for c in "${COMPONENTS[@]}" kube-apiserver etcd; do
		[[ -x "$1/$c" ]] || return 1
	done
}

main() {
	command -v go >/dev/null || die "go is not on PATH"
	packages
	eval "$("$HACK/setup-envtest.sh")"
	local root dir
	root="${SMS_REALK8S_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sms-realk8s}"
	dir="$root/k8s-$KUBERNETES_VERSION"
	mkdir -p "$root"
	exec 9>"$root/.lock"
	flock 9
	if ! has_all "$dir"; then
		local work start
		work="$(mktemp -d "$root/build.XXXXXX")"
		# shellcheck disable=SC2064 # expand now: work is local to main
		trap "rm -rf '$work'" EXIT
		start=$SECONDS
		mkdir -p "$work/out"
		k8s_build "$work/out" "$work" "${COMPONENTS[@]}"
		ln -s "$KUBEBUILDER_ASSETS/kube-apiserver" "$KUBEBUILDER_ASSETS/etcd" "$work/out/"
		rm -rf "$dir"
		mv "$work/out" "$dir"
		log "built ${COMPONENTS[*]} into $dir in $((SECONDS - start)) s"
	fi
	printf 'export SMS_REALK8S_BIN=%q\n' "$dir"
}

main "$@"
