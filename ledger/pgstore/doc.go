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
// Tenant isolation: run every statement of a pooled connection through
// [WithTenant], which opens a transaction and sets the tenant with
// set_config(..., true), so the setting ends with the transaction and the
// next borrower of the connection cannot inherit it. A connection-wide setting
// (set_config(..., false)) is only safe on a connection dedicated to one
// tenant for its whole life. Without a tenant, every row is denied.
//
// Test row-level security as a role that is neither superuser nor table
// owner and lacks BYPASSRLS; a superuser is never subject to the policies, so
// a test run as one shows nothing.
package pgstore
