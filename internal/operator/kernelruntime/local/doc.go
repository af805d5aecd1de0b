// Package local is the kernel runtime that runs each tenant's kernel
// inside the manager's process on a loopback port, with its SQLite file
// and secrets under a data directory: for `manager dev` and the envtest
// suites, where no kubelet runs pods.
//
// Invariants:
//   - a kernel keeps its port across restarts while the port is free, so
//     endpoints stay stable;
//   - a running kernel is restarted only when its configuration (its
//     Config and the spec's checksum) changed or it died; a suspended
//     tenant's kernel is stopped, and Remove stops it and keeps its data.
package local
