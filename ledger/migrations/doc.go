// Package migrations embeds the SQL that installs the ledger's Postgres
// schema.
//
// Each file is applied in name order and must be safe to apply again: it
// creates what is missing and replaces functions, triggers and policies in
// place. The schema enforces the ledger's invariants in the database itself:
// one run per (agent, tenant, period) through a UNIQUE constraint, a trigger
// that refuses any change to a claimed plan or its terms, CHECKs that a halt
// or a failed step always carries a reason, integer money columns, and
// row-level security that is forced, denies by default and scopes every row to
// the tenant named in the app.current_tenant setting. ledger.verify_install()
// reports each of these as one row.
package migrations
