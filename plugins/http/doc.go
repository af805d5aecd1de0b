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
//   - request bodies over MaxBodyBytes are refused with 413 before a handler runs.
package http
