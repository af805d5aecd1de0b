// Package sqlstore turns any contracts.Database into a contracts.Store, and
// holds the SQL code every store driver shares.
//
// A driver is therefore only a Database: [New] creates the kernel's two
// tables if they are missing (kernel_events for the event log, kernel_blobs
// for content-addressed code) and serves the kernel.EventLog and
// kernel.BlobStore contracts from them with portable SQL.
//
// Invariants:
//
//   - sequence numbers are 1, 2, 3, ... without gaps and in commit order:
//     each append inserts MAX(seq)+1 in one statement, and an append that
//     loses a race for a number fails with contracts.ErrUnique and tries
//     the next one, so a reader paging with after=N never skips an event
//     that commits later with a smaller number;
//   - Append returns only after the engine committed the row (each append is
//     its own statement, committed before Query returns), and a failed
//     Append inserted nothing;
//   - Put is idempotent (INSERT ... ON CONFLICT DO NOTHING keyed by the
//     hash), and Get of an unknown hash fails with kernel.CodeNotFound;
//   - event data and times round-trip exactly: data is stored as text,
//     times as RFC 3339 text in UTC with nanoseconds.
//
// [NumberPlaceholders] rewrites ? placeholders to $1, $2, ... for drivers of
// engines that number them (Postgres).
package sqlstore
