// Package isolated is the production executor for agent plugins: the goja
// runtime of package goja, run in a child process per unit under OS limits.
//
// goja cannot bound memory and cannot interrupt a built-in, so a plugin that
// allocates without end or loops inside a regular expression would take the
// whole kernel down in process. Here it takes down only its child. The child
// (sms-sandbox, or this program run with the hidden `sandbox` argument) sets RLIMIT_AS and RLIMIT_CPU on itself before it reads its first
// message, and speaks a JSON protocol over its stdin and stdout: the parent
// loads, activates and calls the unit; the child's cap calls come back to the
// parent, whose kernel HostBridge checks and answers them.
//
// A crossing costs what waking a thread costs, so both sides avoid waking
// one they do not need. The child runs everything on one goroutine: it reads
// a message, starts what it asks, drives the JavaScript until none is left
// to run, and writes all it has to say in one write. In the parent nobody
// reads while no request waits; a waiting request takes the lead and reads
// the child's output itself, so its reply wakes the goroutine that wants it.
// A host call of its own job is served on that goroutine when the child
// reports it has no other host call in flight (Live is 1); otherwise it goes
// to a worker and the leader keeps reading, since one may wait for another.
//
// Invariants the package keeps:
//
//   - one child per unit, started by Load and killed by Close; a child that
//     exits (out of memory, out of CPU time, stuck in a built-in past its
//     deadline, crashed) is never restarted: its activation fails, and every
//     later call returns "sandbox process exited: ..." with the reason;
//   - the child inherits no environment but its limits and Options.Env, so
//     the parent's secrets stay in the parent;
//   - every message from the child is bounded in size and decoded as data;
//     values it sends are checked again by the kernel's HostBridge;
//   - a child that says nothing for its deadline plus twice the grace
//     period while a request waits is frozen, and killed; so is one that
//     does not read its input for as long (every write has that deadline);
//   - the child never blocks on its output: what the pipe cannot take is
//     written by a goroutine of its own while the child goes on reading;
//   - a cap call of a call that has ended (cancelled, out of time) is
//     refused, not served without its context; one being served has its
//     context end at the call's deadline, when the call's caller leaves or
//     when the call returns, whichever comes first;
//   - the children alive at once, warm ones included, stay within
//     Options.MaxChildren and their memory limits within MemoryBudget, and
//     those loaded for one requester (kernel.RequesterOf) within
//     MaxChildrenPerRequester: at a bound the idle plugin used least
//     recently is put to sleep, and only when none is idle is Load (or a
//     wake) refused with ErrLimit;
//   - a plugin idle for Options.IdleAfter sleeps: its child exits and its
//     next call starts one that replays the first activation's host calls
//     from a record, so that the kernel sees each contribution, provision
//     and invocation once; an activation that does not repeat itself fails
//     the plugin, and module state lasts as long as a child;
//   - errors.Is(err, goja.ErrDeadline) and goja.ErrClosed hold across the pipe.
//
// The child program is SandboxProgram (cmd/sms-sandbox) beside the
// executable when it is there, otherwise the executable's hidden
// "sandbox" subcommand (DefaultCommand); the parent names the protocol
// version it speaks in EnvProtocol.
//
// Driver describes it to a driver registry as "isolated", opened with two
// warm children.
package isolated
