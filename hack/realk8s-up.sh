# shellcheck shell=bash
# Bringing the cluster of hack/realk8s.sh up and down. realk8s.sh defines
# the constants, log, die and inns; realk8s-lib.sh the helpers.

# import_images ARCHIVE...: OCI archives into the node's containerd.
import_images() {
	running containerd || die "the cluster is not up"
	local a
	for a in "$@"; do
		ctr_ images import "$a" >&2 || die "importing $a"
	done
}

# control_plane starts etcd, the API server, the controller manager and
# the scheduler, and waits for the API server.
control_plane() {
	local b="$SMS_REALK8S_BIN" p="$STATE/pki"
	daemon etcd "$b/etcd" --data-dir "$STATE/etcd" --unsafe-no-fsync \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster default=http://127.0.0.1:2380
	daemon kube-apiserver "$b/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
		--advertise-address "$NODE_IP" --bind-address 0.0.0.0 --secure-port 6443 \
		--service-cluster-ip-range "$SERVICE_NET" --authorization-mode Node,RBAC \
		--client-ca-file "$p/ca.crt" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
		--kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority "$p/ca.crt" --kubelet-preferred-address-types InternalIP \
		--service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local
	wait_for "the API server" 90 kctl get --raw /readyz
	daemon kube-controller-manager "$b/kube-controller-manager" --kubeconfig "$p/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$p/controller-manager.kubeconfig" --authorization-kubeconfig "$p/controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --leader-elect=false --allocate-node-cidrs --cluster-cidr "$POD_NET" \
		--node-cidr-mask-size 24 --service-cluster-ip-range "$SERVICE_NET" --use-service-account-credentials \
		--service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
		--cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key"
	daemon kube-scheduler "$b/kube-scheduler" --kubeconfig "$p/scheduler.kubeconfig" \
		--authentication-kubeconfig "$p/scheduler.kubeconfig" --authorization-kubeconfig "$p/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --leader-elect=false
}

# node starts containerd, the kubelet, kube-proxy and CoreDNS, and waits
# for the node to be Ready.
start_node() {
	local b="$SMS_REALK8S_BIN" p="$STATE/pki"
	daemon containerd containerd --config "$STATE/config/containerd.toml"
	wait_for "containerd" 30 ctr_ version
	if ! ctr_ images ls -q | grep -qx "$PAUSE_IMAGE"; then
		"$HACK/oci-image.sh" "$STATE/pause.tar" "$PAUSE_IMAGE" 65535:65535 /pause "$b/pause=/pause"
		import_images "$STATE/pause.tar"
	fi
	daemon kubelet "$b/kubelet" --config "$STATE/config/kubelet.yaml" --kubeconfig "$p/kubelet.kubeconfig" \
		--hostname-override "$NODE" --node-ip "$NODE_IP" --root-dir "$STATE/kubelet"
	daemon kube-proxy "$b/kube-proxy" --config "$STATE/config/kube-proxy.yaml"
	daemon coredns "$b/coredns" -conf "$STATE/config/Corefile"
	wait_for "node $NODE Ready" 120 kctl wait --for=condition=Ready "node/$NODE" --timeout 1s
}

# cluster_objects applies what the cluster needs beyond its daemons:
# kube-dns, a Service without selector whose endpoint is CoreDNS on the
# node, and static hostPath volumes for the StatefulSets' claims.
cluster_objects() {
	sed -e "s/@NODE_IP@/$NODE_IP/g" -e "s/@DNS_SERVICE_IP@/$DNS_SERVICE_IP/g" "$HACK/realk8s/dns.yaml" |
		kctl apply -f - >/dev/null
	local i
	for i in $(seq 1 12); do
		mkdir -p "$STATE/volumes/pv$i"
		chmod 777 "$STATE/volumes/pv$i"
		printf '%s\n' "apiVersion: v1" "kind: PersistentVolume" "metadata: {name: sms-realk8s-pv$i}" \
			"spec: {capacity: {storage: 10Gi}, accessModes: [ReadWriteOnce], persistentVolumeReclaimPolicy: Retain," \
			"  hostPath: {path: $STATE/volumes/pv$i, type: Directory}}" | kctl apply -f - >/dev/null
	done
}

up() {
	eval "$("$HACK/setup-realk8s.sh")"
	mkdir -p "$STATE"
	network
	pki
	configs
	control_plane
	start_node
	cluster_objects
	wait_for "the default ServiceAccount" 60 kctl -n default get serviceaccount default
	log "up: node $NODE Ready at $NODE_IP in network namespace $NETNS"
	printf 'export KUBECONFIG=%q\nexport SMS_REALK8S_NETNS=%q\nexport SMS_REALK8S_STATE=%q\nexport SMS_REALK8S_NODE_IP=%q\nexport SMS_REALK8S_POD_NET=%q\n' \
		"$STATE/pki/admin.kubeconfig" "$NETNS" "$STATE" "$NODE_IP" "$POD_NET"
}

# stop NAME stops the daemon NAME and waits for it to exit.
stop() {
	local pid i
	pid="$(cat "$STATE/run/$1.pid" 2>/dev/null)" || return 0
	kill "$pid" 2>/dev/null || true
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$STATE/run/$1.pid"
}

# remove_containers stops every container the node runs and removes its
# machine-wide traces: pod network namespaces and CNI results.
remove_containers() {
	running containerd || return 0
	local ids id ns
	ids="$(ctr_ containers ls -q 2>/dev/null)" || return 0
	for id in $ids; do
		for ns in $(ctr_ containers info "$id" 2>/dev/null | grep -o '/var/run/netns/cni-[0-9a-f-]*' | sort -u); do
			umount "/run/netns/${ns##*/}" 2>/dev/null || true
			rm -f "/run/netns/${ns##*/}"
		done
		ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
		ctr_ tasks delete -f "$id" >/dev/null 2>&1 || true
		ctr_ containers delete "$id" >/dev/null 2>&1 || true
		# What containerd and runc keep in /run for the container: the
		# shim's socket, named by a hash of containerd's address, the
		# namespace and the id, and runc's state.
		rm -f "/run/containerd/s/$(printf '%s' "$STATE/containerd/containerd.sock/k8s.io/$id" | sha256sum | cut -d' ' -f1)"
		rm -rf "/run/containerd/runc/k8s.io/$id"
		rm -f /var/lib/cni/results/*-"$id"-*
	done
}

down() {
	local d
	for d in kube-proxy coredns kubelet; do stop "$d"; done
	remove_containers
	for d in containerd kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$d"; done
	if [[ -d "$STATE" ]]; then
		findmnt -rn -o TARGET | grep "^$STATE/" | sort -r | while read -r m; do umount -l "$m" || true; done
		find /var/log/containers -maxdepth 1 -lname "$STATE/*" -delete 2>/dev/null || true
	fi
	find /sys/fs/cgroup/*/kubepods -depth -type d -exec rmdir {} + 2>/dev/null || true
	rmdir /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd/s /run/containerd 2>/dev/null || true
	[[ ! -e "$NETNS_PATH" ]] || ip netns del "$NETNS"
	rm -rf "$STATE"
	log "down: nothing of the cluster is left"
}
