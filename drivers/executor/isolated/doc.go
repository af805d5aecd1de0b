// Package isolated is the production executor for agent plugins: the goja
// runtime of package goja, run in a child process per unit under OS limits.
//
// goja cannot bound memory and cannot interrupt a built-in, so a plugin that
// allocates without end or loops inside a regular expression would take the
// whole kernel down in process. Here it takes down only its child. The child
// is this program run with the hidden `sandbox` argument (`manager sandbox`);
// it sets RLIMIT_AS and RLIMIT_CPU on itself before it reads its first
// message, and speaks a JSON protocol over its stdin and stdout: the parent
// loads, activates and calls the unit; the child's cap calls come back to the
// parent, whose kernel HostBridge checks and answers them.
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
//   - a request the child does not answer within its deadline plus twice the
//     grace period means a frozen child, which is killed;
//   - errors.Is(err, goja.ErrDeadline) and goja.ErrClosed hold across the pipe.
package isolated
