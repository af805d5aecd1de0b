// Package kernelruntime hides where tenants' kernels run. Kubernetes runs
// each as a one-replica StatefulSet with a Service and a volume, owned by
// its Tenant; the local runtime (package kernelruntime/local) runs each
// inside the manager's process on a loopback port, with its SQLite file
// under a data directory, for `manager dev` and the envtest suites, where
// no kubelet runs pods.
//
// Invariants:
//   - this package links no kernel: it configures kernels
//     (kernelconfig.Config) and never opens one, so the reconcilers and
//     kubectl sms, which import it, link neither the kernel nor the judge
//     (internal/architecture checks it); only kernelruntime/local opens
//     kernels.
package kernelruntime
