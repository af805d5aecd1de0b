// Package kerneltest holds test helpers for code built on the kernel: a fake
// Executor whose agent "code" names a Go script, so agent fibers, their host
// bridge and their function proxies can be tested without a JavaScript
// runtime. The real executors are tested against the same kernel contract.
package kerneltest
