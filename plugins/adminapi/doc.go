// Package adminapi is the kernel's JSON admin API: a system plugin that
// contributes routes for the kernel's state and catalog, submitting agent
// plugins to the judge, enabling, disabling and uninstalling them, deciding
// approvals, and reading the event log (paged or as a server-sent stream),
// chatting with the agent when one is active (POST /api/chat, and
// /api/chat/stream as server-sent events), plus /healthz, /readyz and
// /metrics.
//
// Invariants:
//   - every route names the scope it needs (read, chat, approve, admin), which
//     the http plugin checks against the caller's credential; with no
//     credential configured the API is open and GET /api/state says so;
//   - only a credential with the admin scope speaks for someone else
//     (X-Requested-By, a decision's by); system plugins cannot be disabled
//     or uninstalled (403);
//   - reads (state, approvals, metrics) never wait for the judge;
//   - streams (event streams and chat streams together) are capped per
//     credential and in total (429 too_many past a cap), and a quiet event
//     stream waits for the kernel's next append instead of polling the log;
//   - a submission's answer is the judge's verdict, never a half-applied
//     state: rejections and pending approvals are verdicts with status 200,
//     failures of the request are {"error":{"message","kind"}} errors;
//   - every answer and streamed event is a type of adminv1, the wire
//     contract its clients decode, converted from the kernel's, the
//     judge's and the other plugins' views in one place (wire.go), and
//     every successful answer names adminv1.Version in
//     adminv1.VersionHeader; streams are written by adminv1.SSEWriter.
package adminapi
