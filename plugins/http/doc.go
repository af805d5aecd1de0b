// Package http is the kernel's HTTP surface: the system plugin that owns the
// route point and serves every contributed route from one http.Handler.
//
// A route is {method, path, handler}. Paths are literal segments and
// ":name" parameters. System plugins contribute a Route with a Go Handler;
// agent plugins contribute the same shape as JSON whose handler is a
// function reference, called with {method, path, params, query, headers,
// body} and resolving to {status?, headers?, body?}.
//
// Invariants:
//   - one route per (method, pattern): a second contribution is rejected at
//     validation, failing the contributing fiber and leaving the first intact;
//   - a route leaves the table the moment its contribution is undone;
//   - every error, from routing, a handler or a panic, is written as
//     {"error":{"message","kind"}} with the status of its kind, and a 500
//     names the plugin that owns the failing route;
//   - request bodies over MaxBodyBytes are refused with 413 before a handler runs;
//   - the admin surface is the system's: agent routes cannot be declared under
//     DefaultReserved or a prefix contributed to ReservedPoint, requests there
//     never reach an agent route, and system routes win every match;
//   - once credentials are configured, every route with a Scope needs a
//     credential holding it (401 without one, 403 with another), and every
//     system route under /api has a Scope;
//   - agent handlers never see credentials: no Authorization, X-Admin-Token,
//     Proxy-Authorization or Cookie header, and a request holding a
//     configured token anywhere else (path, query, other headers, body,
//     read through JSON and percent escapes nested up to maxRounds deep) is
//     refused with 400 before the handler runs; CallerKey tells agent code
//     who calls, with no secret;
//   - a Stream response outlives the server's read and write timeouts, but
//     each of its writes is bounded by StreamWriteTimeout.
package http
