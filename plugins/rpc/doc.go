// Package rpc is the batched RPC system plugin: POST /api/rpc runs a batch
// of ORM calls in one round trip, in JSON-RPC 2.0 shape, and
// POST /api/rpc/meta does the same for the meta plugin's views, actions and
// menus.
//
// A call's method and params are those of cap.invoke on the orm-user key
// (search, read, search_read, count, read_group, create, write, unlink,
// call, spec, models): the same methods, the same argument order, acting
// for the caller exactly as the ORM's REST routes do, with the guard
// applied to every call and never sudo.
//
// # Transactions
//
// A batch with no write in it runs its calls one after another, each on
// its own: a failing read answers its error and the others still answer.
// A batch with at least one write (create, write, unlink, call) is one
// transaction (contracts.Atomic) from its first write on (the reads before
// it run first, outside): its calls run in order, each sees what the ones
// before it wrote, and the first call that fails rolls the whole batch
// back. That call answers its error, the ones before it answer
// CodeRolledBack and the ones after it CodeNotRun, so nothing of a failed
// batch stays applied. After hooks and ORM listeners (automation, audit
// tracking) run once the batch has committed, and never for a batch that
// rolled back.
//
// # Bounds
//
// Calls per batch, bytes per batch, batches in flight per credential and
// per kernel, and the time a write batch may hold its transaction are
// bounded (Options); a refusal is a 4xx that names the limit.
package rpc
