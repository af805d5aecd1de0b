// Package envtestbin finds the kube-apiserver and etcd binaries that
// hack/setup-envtest.sh builds, and the repository they belong to. It is
// shared by the test suites (internal/testenv) and by `manager dev`, and
// imports nothing of package testing, so the manager binary stays free of it.
package envtestbin
