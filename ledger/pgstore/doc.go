// Package pgstore is the Postgres implementation of ledger.Store.
//
// It talks to Postgres through pgx and nothing else: a [Store] accepts any
// [DB] (a *pgxpool.Pool, a *pgx.Conn or a pgx.Tx) and imports no other
// driver. It lives apart from package ledger so that the ledger's core keeps
// no network-capable import.
//
// The guarantees are enforced by the schema in package migrations, not by
// this code: the UNIQUE constraint decides concurrent claims, a trigger
// refuses changes to a claimed plan, CHECKs refuse halts and failed steps
// without reasons, and row-level security confines every statement to the
// tenant in the app.current_tenant setting. The store maps those refusals to
// the ledger's sentinel errors.
//
// Tenant isolation on a pooled connection takes one of two forms, and both
// set the tenant with set_config(..., true), so the setting ends with its
// transaction and the next borrower of the connection cannot inherit it:
//
//   - [Tenant] returns a [TenantDB]: every statement is its own transaction,
//     pipelined with the tenant setting in one round trip. The store needs
//     nothing more, since its writes are compare-and-sets; this is the fast
//     path for a host that serves many tenants from one pool.
//   - [WithTenant] opens a transaction and sets the tenant in it, for callers
//     whose own statements must commit together with the ledger's.
//
// A connection-wide setting (set_config(..., false)) is only safe on a
// connection dedicated to one tenant for its whole life. Without a tenant,
// every row is denied.
//
// Test row-level security as a role that is neither superuser nor table
// owner and lacks BYPASSRLS; a superuser is never subject to the policies, so
// a test run as one shows nothing.
package pgstore
