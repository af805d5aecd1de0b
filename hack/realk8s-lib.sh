# shellcheck shell=bash
# The functions behind hack/realk8s.sh: certificates, configuration, the
# daemons, and a teardown that leaves nothing behind. realk8s.sh defines
# the constants, log, die and inns.

# write_if_changed FILE: writes stdin to FILE unless FILE already holds it
# (kube-proxy exits when its configuration file is rewritten).
write_if_changed() {
	local tmp
	tmp="$(mktemp)"
	cat >"$tmp"
	if cmp -s "$tmp" "$1"; then
		rm -f "$tmp"
	else
		mv "$tmp" "$1"
	fi
}

# cert NAME CN ORG SANS: a key and a certificate signed by the cluster CA.
cert() {
	local d="$STATE/pki" name="$1" cn="$2" org="$3" sans="$4"
	[[ -f "$d/$name.crt" ]] && return
	openssl req -newkey rsa:2048 -nodes -keyout "$d/$name.key" -out "$d/$name.csr" \
		-subj "/CN=$cn${org:+/O=$org}" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		[[ -z "$sans" ]] || echo "subjectAltName=$sans"
	} >"$d/$name.ext"
	openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-out "$d/$name.crt" -days 30 -extfile "$d/$name.ext" 2>/dev/null
	rm -f "$d/$name.csr" "$d/$name.ext"
}

# kubeconfig NAME: a kubeconfig for the client certificate NAME.
kubeconfig() {
	local d="$STATE/pki"
	write_if_changed "$d/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: sms-realk8s
  cluster:
    server: https://$NODE_IP:6443
    certificate-authority: $d/ca.crt
users:
- name: $1
  user:
    client-certificate: $d/$1.crt
    client-key: $d/$1.key
contexts:
- name: sms-realk8s
  context: {cluster: sms-realk8s, user: $1}
current-context: sms-realk8s
EOF
}

pki() {
	local d="$STATE/pki"
	mkdir -p "$d"
	chmod 700 "$d"
	if [[ ! -f "$d/ca.crt" ]]; then
		openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/ca.crt" -days 30 \
			-subj "/CN=sms-realk8s-ca" 2>/dev/null
		openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
		openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
	fi
	cert apiserver kube-apiserver "" "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:$API_SERVICE_IP,IP:$NODE_IP,IP:127.0.0.1"
	cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters ""
	cert admin admin system:masters ""
	cert controller-manager system:kube-controller-manager "" ""
	cert scheduler system:kube-scheduler "" ""
	cert proxy system:kube-proxy "" ""
	cert kubelet "system:node:$NODE" system:nodes "DNS:$NODE,IP:$NODE_IP"
	cert coredns coredns "" ""
	local c
	for c in admin controller-manager scheduler proxy kubelet coredns; do kubeconfig "$c"; done
}

# network creates the namespace with the node's address on a bridge
# without ports (this kernel has no dummy interfaces) and a route for the
# service range, which kube-proxy's rules translate.
network() {
	[[ -e "$NETNS_PATH" ]] || ip netns add "$NETNS"
	inns ip link set lo up
	inns ip link show smsnode0 >/dev/null 2>&1 || inns ip link add smsnode0 type bridge
	inns ip addr replace "$NODE_IP/24" dev smsnode0
	inns ip link set smsnode0 up
	inns ip route replace "$SERVICE_NET" dev smsnode0 src "$NODE_IP"
	inns sysctl -qw net.ipv4.ip_forward=1
	if [[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]]; then
		inns sysctl -qw net.bridge.bridge-nf-call-iptables=1
	fi
}

configs() {
	local d="$STATE/config"
	mkdir -p "$d" "$STATE/cni/net.d" "$STATE/cni/ipam" "$STATE/pod-logs" "$STATE/containerd"
	write_if_changed "$d/containerd.toml" <<EOF
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
[grpc]
  address = "$STATE/containerd/containerd.sock"
[ttrpc]
  address = "$STATE/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
EOF
	write_if_changed "$STATE/cni/net.d/10-sms.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "sms", "plugins": [{"type": "bridge", "bridge": "cni0", "isGateway": true,
  "hairpinMode": true, "ipam": {"type": "host-local", "dataDir": "$STATE/cni/ipam",
  "ranges": [[{"subnet": "$NODE_POD_NET"}]], "routes": [{"dst": "$SERVICE_NET"}, {"dst": "$NODE_NET"}]}}]}
EOF
	: >"$d/resolv.conf"
	write_if_changed "$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $STATE/pki/ca.crt}}
authorization: {mode: Webhook}
tlsCertFile: $STATE/pki/kubelet.crt
tlsPrivateKeyFile: $STATE/pki/kubelet.key
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$STATE/containerd/containerd.sock
podLogsDir: $STATE/pod-logs
clusterDNS: [$DNS_SERVICE_IP]
clusterDomain: cluster.local
resolvConf: $d/resolv.conf
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
imageGCHighThresholdPercent: 100
EOF
	write_if_changed "$d/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $STATE/pki/proxy.kubeconfig}
mode: iptables
clusterCIDR: $POD_NET
hostnameOverride: $NODE
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
	write_if_changed "$d/Corefile" <<EOF
.:53 {
    bind $NODE_IP
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $STATE/pki/coredns.kubeconfig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
}
EOF
}

# running NAME: whether the daemon NAME started by this script runs.
running() {
	local pid
	pid="$(cat "$STATE/run/$1.pid" 2>/dev/null)" || return 1
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}

# daemon NAME CMD...: starts CMD inside the namespace unless NAME runs.
daemon() {
	local name="$1"
	shift
	running "$name" && return
	mkdir -p "$STATE/run" "$STATE/logs"
	# nsenter and setsid exec, so $! is the daemon itself (inns, a shell
	# function, would put a subshell in between).
	nsenter --net="$NETNS_PATH" setsid "$@" >>"$STATE/logs/$name.log" 2>&1 </dev/null &
	echo $! >"$STATE/run/$name.pid"
}

# wait_for WHAT SECONDS CMD...: retries CMD until it succeeds.
wait_for() {
	local what="$1" deadline=$((SECONDS + $2))
	shift 2
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || die "$what: not within ${deadline}s; logs in $STATE/logs"
		sleep 0.5
	done
}

kctl() { inns kubectl --kubeconfig "$STATE/pki/admin.kubeconfig" "$@"; }

ctr_() { ctr --address "$STATE/containerd/containerd.sock" -n k8s.io "$@"; }
