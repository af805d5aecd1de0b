// Package kernelruntime hides where tenants' kernels run. Kubernetes runs
// each as a one-replica StatefulSet with a Service and a volume, owned by
// its Tenant; Local runs each inside the manager's process on a loopback
// port, with its SQLite file under a data directory, for `manager dev`
// and the envtest suites, where no kubelet runs pods.
package kernelruntime
