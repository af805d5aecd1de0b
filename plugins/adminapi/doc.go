// Package adminapi is the kernel's JSON admin API: a system plugin that
// contributes routes for the kernel's state and catalog, submitting agent
// plugins to the judge, enabling, disabling and uninstalling them, deciding
// approvals, and reading the event log (paged or as a server-sent stream),
// chatting with the agent when one is active (POST /api/chat, and
// /api/chat/stream as server-sent events), plus /healthz, /readyz and
// /metrics.
//
// Invariants:
//   - every route that changes something requires the admin bearer token,
//     or the nod of an admin-authorizer contribution (a system-only point);
//     with no token configured the API is open and GET /api/state says so;
//   - tokens are compared in constant time;
//   - a submission's answer is the judge's verdict, never a half-applied
//     state: rejections and pending approvals are verdicts with status 200,
//     failures of the request are {"error":{"message","kind"}} errors.
package adminapi
