// Package devenv runs the whole product on one machine with no cluster:
// an embedded control plane (the kube-apiserver and etcd that
// hack/setup-envtest.sh builds), the sms CRDs and webhook configurations,
// and the operator with the local kernel runtime, its webhook served on
// loopback. `manager dev` is its command.
//
// Everything lives under one directory (.sms by default): etcd's data,
// the tenants' kernel data, the kubeconfig of an administrator and a
// lock file, so stopping and starting again keeps every tenant, plugin,
// approval and agent change, and a second instance on the same directory
// refuses to start instead of sharing etcd's files.
package devenv
