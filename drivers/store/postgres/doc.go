// Package postgres is the Postgres storage driver: a contracts.Database on a
// pgx connection pool, confined to one schema per tenant.
//
// [Open] validates the schema name, creates the schema if it is missing and
// pins search_path to that schema alone on every pooled connection: it is
// sent in the startup message of each new connection and checked when the
// connection is made, before the pool hands it out. Unqualified table names
// therefore resolve in the tenant's schema and nowhere else (not even
// public), and the identifiers the contracts accept cannot name another
// schema because they cannot contain a dot. [OpenStore] adds the kernel's
// event log and blob store with sqlstore.
//
// Invariants:
//
//   - a schema name is checked (contracts.IdentPattern, and not pg_* or
//     information_schema) before any connection is made;
//   - ? placeholders are rewritten to $1, $2, ... and their count must match
//     the arguments, before the statement is sent;
//   - result values are normalized to the contracts' Go types (int2 and
//     int4 to int64, float4 and numeric to float64);
//   - a statement outside a transaction that fails only because a table's
//     columns changed since this connection prepared it ("cached plan must
//     not change result type") is prepared again and run again, at most once
//     per pooled connection: it never ran, so the retry cannot apply a write
//     twice. Inside a transaction the error is returned, and the whole
//     transaction may be retried. Explicit column lists avoid it entirely.
//
// Code using a Database must not change search_path (SET search_path, SET
// SCHEMA, set_config): a pooled connection would keep the change.
//
// Driver describes it to a driver registry as "postgres" (alias
// postgresql), the schemes of its postgres:// URLs.
package postgres
