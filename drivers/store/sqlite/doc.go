// Package sqlite is the embedded storage driver and the default a kernel
// gets with no configuration: one SQLite file per kernel, in pure Go
// (modernc.org/sqlite, no cgo).
//
// [Open] returns a contracts.Database; [OpenStore] wraps it with sqlstore
// into the kernel's event log and blob store. The path ":memory:" gives a
// private in-memory database for tests.
//
// Invariants:
//
//   - the driver holds exactly one connection. SQLite allows one writer at a
//     time anyway; with one connection, statements from many goroutines
//     queue instead of failing with SQLITE_BUSY, and ":memory:" stays one
//     database (each new connection to it would be an empty one);
//   - files run in WAL mode with synchronous=FULL, so a statement that
//     returned has reached the disk and survives a crash of the process or
//     the machine; transactions begin IMMEDIATE, taking the write lock up
//     front;
//   - one process opens a file at a time (a kernel is a single writer); a
//     busy timeout covers short overlaps such as a restart;
//   - values read from columns declared BOOLEAN come back as bool, as they
//     do on Postgres.
//   - queries outside a transaction run through a cache of prepared
//     statements (the 128 used most recently, up to 8 KiB of text each), so
//     a repeated query skips SQLite's parser; callers put LIMIT and OFFSET
//     in the text as literals, since binding them makes SQLite prepare the
//     statement again on every run.
//
// Driver describes it to a driver registry as "sqlite", the scheme of its
// specs sqlite:PATH and sqlite::memory:.
package sqlite
