// Package testenv starts a real kube-apiserver and etcd (controller-runtime's
// envtest, with the binaries hack/setup-envtest.sh builds) with the sms CRDs
// and, optionally, webhooks installed, for the operator's test suites.
package testenv
