// Package executortest is the conformance suite every kernel.Executor runs
// from its own tests, like testing/fstest for file systems: Run(t, factory)
// drives units through a real kernel (kernel.New with the executor,
// Authorize and Propose) and directly, covering activation, every cap
// method, functions crossing both ways, disposal, thrown errors, deadlines,
// deep recursion, oversized values, and attempts to reach the host.
//
// It also holds what those tests and benchmarks share: Env, a kernel with a
// host plugin that defines points and provides keys; Bridge, a HostBridge
// for driving a unit without a kernel; LogCapture; and the BenchToolCall and
// BenchMount benchmarks.
//
// Invariants the suite holds every executor to: agent code sees no host
// object and no host function but through cap; every value crossing is a
// JSON snapshot within the kernel's limits; a call that never ends fails at
// its deadline and the kernel keeps serving other plugins; a disposed
// plugin's functions and a closed unit fail clearly.
package executortest
