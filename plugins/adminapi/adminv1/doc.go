// Package adminv1 is version 1 of the kernel admin API's wire format and
// its Go client: the routes served by plugins/adminapi (which answers with
// these types) and described in docs/admin-api.md. The Kubernetes
// operator and kubectl sms drive kernels through it: read the state or one
// plugin, submit agent plugins, decide approvals, enable, disable and
// uninstall plugins, page or follow the event log, and chat.
//
// It speaks the kernel's own types (judge.Verdict, judge.Approval,
// judge.Plugin, kernel.FiberView, kernel.Event, kernel.TaintSet) so the
// operator and the kernel cannot drift apart on the wire format.
//
// Invariants:
//   - A non-2xx answer is an *Error carrying the status and the kernel's
//     {"error":{"message","kind"}}; branch on it with errors.As, IsNotFound
//     or IsConflict, never on the message text.
//   - A rejected or pending plugin is a Verdict, not an error: the kernel
//     answers both with 200.
//   - Path segments (plugin and approval ids) are escaped, so an id can
//     never address another route.
//   - Answers are read through a limit (MaxAnswerBytes); a larger answer is
//     an error, never a silently truncated value.
//   - The admin token is sent only as the Authorization header and never
//     appears in an error.
//
// A Client is safe for concurrent use. It never retries by itself. Submit
// (same manifest and code), Enable, Disable and Uninstall are idempotent
// on the kernel, so a caller may repeat them after a transport error;
// Approve and Reject of an approval that was already decided answer 404
// (IsNotFound), after which the caller re-reads State.
package adminv1

// Version is the admin API version this package speaks.
const Version = "v1"
