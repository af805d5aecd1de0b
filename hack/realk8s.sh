#!/usr/bin/env bash
# A real one-node Kubernetes cluster, for the end-to-end tests:
#
#   hack/realk8s.sh up      # idempotent; prints the export lines below
#   hack/realk8s.sh down    # leaves nothing behind
#   hack/realk8s.sh run CMD # runs CMD inside the cluster's network namespace
#
# Everything runs inside the network namespace $SMS_REALK8S_NETNS (default
# sms-realk8s), which `up` creates: etcd, kube-apiserver, the controller
# manager, the scheduler, containerd with runc and the CNI bridge, the
# kubelet, kube-proxy and CoreDNS. Every address the cluster uses (node,
# pods, services) exists only there; nothing is routed in the machine's own
# namespace, so clients (kubectl, curl, the tests) run inside it too, with
# `realk8s.sh run` or `nsenter --net=/run/netns/NAME`.
#
# `up` prints, for eval:
#   KUBECONFIG          an admin kubeconfig (system:masters)
#   SMS_REALK8S_NETNS   the network namespace's name (/run/netns/NAME)
#   SMS_REALK8S_STATE   the cluster's state directory
#   SMS_REALK8S_NODE_IP the node's address
#   SMS_REALK8S_POD_NET the pods' addresses
# Images are imported with `realk8s.sh import ARCHIVE...` (OCI archives,
# such as `make image` writes), and run with imagePullPolicy Never or
# IfNotPresent. The binaries come from hack/setup-realk8s.sh. Needs root.
set -euo pipefail

readonly HACK="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly NETNS="${SMS_REALK8S_NETNS:-sms-realk8s}"
readonly NETNS_PATH="/run/netns/$NETNS"
readonly STATE="${SMS_REALK8S_STATE:-/var/lib/sms-realk8s}"
readonly NODE=sms-node
readonly NODE_IP=10.200.0.2
readonly NODE_NET=10.200.0.0/24
readonly POD_NET=10.244.0.0/16
readonly NODE_POD_NET=10.244.0.0/24
readonly SERVICE_NET=10.96.0.0/16
readonly API_SERVICE_IP=10.96.0.1
readonly DNS_SERVICE_IP=10.96.0.10
readonly PAUSE_IMAGE=localhost/sms/pause:1
readonly COREDNS_IMAGE=localhost/sms/coredns:1
readonly DAEMONS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy)

log() { printf 'realk8s.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# inns runs a command inside the cluster's network namespace.
inns() { nsenter --net="$NETNS_PATH" "$@"; }

# shellcheck source=hack/realk8s-lib.sh
source "$HACK/realk8s-lib.sh"
# shellcheck source=hack/realk8s-up.sh
source "$HACK/realk8s-up.sh"

usage() { die "usage: realk8s.sh up | down | run CMD... | import ARCHIVE..."; }

main() {
	[[ $EUID -eq 0 ]] || die "needs root (network namespaces, containerd, the kubelet)"
	case "${1:-}" in
	up) up ;;
	down) down ;;
	run)
		shift
		(($# > 0)) || usage
		export KUBECONFIG="$STATE/pki/admin.kubeconfig"
		exec nsenter --net="$NETNS_PATH" "$@"
		;;
	import)
		shift
		(($# > 0)) || usage
		import_images "$@"
		;;
	*) usage ;;
	esac
}

main "$@"
