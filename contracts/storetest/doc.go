// Package storetest is the conformance kit for storage drivers, in the
// spirit of testing/fstest.TestFS: every driver runs [RunDatabase] and
// [RunStore] from its own tests, so all drivers keep one contract.
//
// RunDatabase checks a contracts.Database: DDL, ? binding and the Go types of
// results, Columns, identifier quoting and rejection, transactions and
// rollback, the ErrUnique, ErrClosed and cancellation rules, and concurrent
// use. RunStore checks a contracts.Store: event append and read order,
// paging by after and limit, gap-free sequence numbers under concurrent
// appends, blobs by hash, reopening, and a kernel with system and agent
// plugins restoring exactly the same state on a reopened store.
//
// [CrashChild] and [RunCrash] check durability across a SIGKILL by
// re-executing the test binary; [BenchAppend] and [BenchRestore] are the
// shared benchmarks; [PostgresURL] is the one place the Postgres tests read
// their server from.
//
// The kit owns what it opens: every database and store it gets is closed
// when its test ends. Each test asserts on state read back from the store,
// never on time taken.
package storetest
