// Package adminv1 is version 1 of the kernel admin API's wire format and
// its Go client: the routes served by plugins/adminapi (which answers with
// these types) and described in docs/admin-api.md. The Kubernetes
// operator and kubectl sms drive kernels through it: read the state or one
// plugin, submit agent plugins, decide approvals, enable, disable and
// uninstall plugins, page or follow the event log, and chat.
//
// It is the admin API's whole wire contract: its own JSON types for
// everything the API sends and receives (State, Fiber, Manifest, Plugin,
// Verdict, Approval, Decision, Event, ChatEvent, ErrorAnswer, ...), its
// routes and headers, the names clients branch on (statuses, gates, fiber
// states, trust tiers) and HashCode, the hash the kernel binds code to.
// The server converts the kernel's and the judge's views into these types
// in one place (plugins/adminapi's wire.go) and encodes nothing else, and
// its tests decode every answer into them with unknown fields refused.
// So the operator and kubectl sms link neither the kernel, nor the judge,
// nor a JavaScript parser. The package lives under plugins/adminapi, not
// under api/, because the server (ring 2) imports it and ring 2 may not
// import ring 4.
//
// Invariants:
//   - The package imports the standard library only (internal/architecture
//     checks it).
//   - The kernel names the version of the API it serves in VersionHeader;
//     the client refuses an answer naming another version than Version.
//   - Server-sent event streams are written by SSEWriter and read by
//     ReadSSE, one JSON value per "data:" line, no line over MaxFrameBytes.
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
