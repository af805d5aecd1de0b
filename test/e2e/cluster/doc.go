// Package cluster holds the end-to-end tests on a real one-node Kubernetes
// cluster (hack/realk8s.sh): kernel pods that run under a kubelet, the
// operator deployed from config/selfsigned as users deploy it, and the
// real kubectl. The tests need root; SMS_SKIP_REALK8S=1 makes each report
// itself skipped, and SMS_REALK8S_KEEP=1 leaves the cluster up afterwards.
package cluster
