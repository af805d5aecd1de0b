// Package goja is the in-process executor for agent plugins: each unit is
// its own goja runtime (github.com/dop251/goja) driven by its own goroutine.
//
// Agent code arrives as `export default async function activate(cap) {...}`
// with no imports. goja has no modules, so Compile reads the code through
// package agentsource, the front end the judge's lint gate reads it with
// too: it rewrites that one export into a declaration inside a strict
// wrapper function and refuses every other import or export with a message
// naming the line; then goja compiles the wrapped tree. Source maps are
// disabled everywhere the parser runs (agentsource's parse and the
// runtime's), so a sourceMappingURL comment can never make the host read a
// file.
//
// Invariants the package keeps:
//
//   - a runtime is only ever touched by its unit's loop goroutine; Activate
//     and Call post jobs to the loop (StartCall without waiting), and host
//     calls run on worker goroutines, or are started by an AsyncHost, and post
//     their answers back, so the loop never blocks on the host and a host call
//     that calls back into the same unit is served;
//   - agent code sees no host object: the only host function is a parameter
//     of the bridge script, values are converted to and from JSON on the Go
//     side within the kernel's snapshot limits (agent code that replaces JSON,
//     toJSON or prototype setters changes nothing), and functions cross as
//     {"$fn": id};
//   - every activation and call has a deadline: JavaScript still running when
//     it passes is interrupted, and the call fails with ErrDeadline; the call
//     stack depth is always bounded (Options.MaxCallStackSize); the host
//     calls it makes get the caller's context with that deadline, cancelled
//     as soon as the activation or call ends;
//   - after an interrupt or a stack overflow the unit is stopped: goja cannot
//     run promise jobs again in a runtime whose async function was
//     interrupted, so every later call fails, saying why;
//   - source size and bracket nesting are checked before the parser runs,
//     against Options.MaxSourceBytes and MaxSourceNesting, whose defaults
//     are agentsource's and so the judge's lint gate's;
//   - no code is compiled from strings: before any agent code runs, eval and
//     GoError are deleted and every function constructor (Function, and the
//     constructor of the async and generator function prototypes) throws;
//   - what one activation or call asks of the host is bounded (cap calls in
//     all, cap calls in flight, bytes either way): past a budget the
//     JavaScript is interrupted and the call fails, so a flood of cap calls
//     cannot grow the process;
//   - a closed unit fails every later call with ErrClosed.
//
// goja cannot bound memory, and cannot interrupt a built-in (a regular
// expression that backtracks for minutes keeps its goroutine busy). Use this
// executor for tests and development; production runs the same runtime in a
// child process under OS limits (package isolated).
//
// Driver describes it to a driver registry as "goja".
package goja
