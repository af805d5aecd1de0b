// Package pgtest gives the ledger's Postgres tests a fresh, migrated
// database each, on the server named by SMS_TEST_POSTGRES_URL.
//
// Without that variable a Postgres test skips, unless SMS_REQUIRE_POSTGRES is
// set, in which case it fails: CI sets both, so a missing server can never
// pass silently. Every database gets a random name and is dropped when its
// test ends, so tests run in parallel and can be re-run. The unprivileged
// role used to test row-level security is created idempotently and is
// neither superuser nor table owner, and lacks BYPASSRLS.
package pgtest
