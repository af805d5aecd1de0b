// Package judge is the judge: the system plugin every agent plugin passes
// before it mounts, and the only code that mints mount authorizations for
// agent plugins.
//
// A submission runs the gates in order: manifest (shape, the agent. prefix,
// declared points that exist), trust (nothing system-only, using the kernel
// catalog's key and point metadata), lint (the code read through package
// agentsource, the front end the executors compile it with: the same
// export rewrite, limits and refusals; then no require, eval, Function,
// .constructor or with), and load (the code loads
// and its activate terminates in a throwaway unit that never touches the
// live kernel), then any gate a system plugin contributed to GatePoint.
// Policy then decides from the declaration alone (never from what the code
// did on trial, which agent code can tell from a live run): a plugin with a
// sensitive scope or declaring a sensitive point waits for a human, as an
// Approval bound to its code hash. Otherwise (or once approved) the judge
// mints an authorization, proposes the plugin (a staged mount) and checks
// the invariants: every system plugin active before is still active, and
// every Invariant contributed to InvariantPoint holds. Then it commits the
// mount. A plugin that fails to activate or breaks an invariant is rolled
// back: the kernel aborts the staged mount, which puts back the committed
// version or removes a new plugin, and the kernel is tainted.
//
// Invariants the package keeps:
//
//   - the judge is out of agent code's reach: Key is system-only to read and
//     provide, GatePoint and InvariantPoint are system-only, minting needs the
//     kernel API only a system fiber holds, and agent ids cannot take a system
//     plugin's id (and must start with AgentPrefix);
//   - it fails closed: a gate or invariant that errors, panics or runs past
//     the gate timeout refuses the plugin;
//   - the lint gate's front end is the executors': code the gate accepts
//     is never refused by an executor's front end (at its default limits),
//     and code the gate refuses there the executor refuses for the same
//     problem on the same line;
//   - a decision names the code hash it binds to and a printable decider;
//   - Pending never waits for a submission in flight;
//   - every decision is in the event log (judge/* audit events) before it
//     takes effect, pending approvals are rebuilt from it on activation, and
//     resubmitting what is pending or mounted changes nothing;
//   - pending approvals are bounded: one per plugin id (a newer submission
//     supersedes it), Policy.MaxPending in all, Policy.MaxPendingPerRequester
//     per requester, Policy.MaxPendingBytes of manifest and code each;
//   - a restart holds to the judge's decisions: as the kernel's RestoreGuard
//     it refuses a sensitive plugin the log has no approval of (for its
//     manifest and code), and vouches for installs from logs written before
//     the kernel committed mounts only when its own judge/mounted names them.
package judge
