package contracts

import (
	"context"
	"errors"
)

// Errors a Database wraps so callers can branch with errors.Is whatever the
// engine.
var (
	// ErrUnique: a statement violated a unique or primary-key constraint.
	// Nothing of that statement was applied.
	ErrUnique = errors.New("unique constraint violated")
	// ErrClosed: the Database (or the Store owning it) was closed.
	ErrClosed = errors.New("database is closed")
)

// Row is one result row keyed by column name. Values have the same Go types
// in every dialect:
//
//	NULL                              nil
//	integer columns                   int64
//	floating-point and numeric        float64
//	text columns                      string
//	blob / bytea columns              []byte
//	columns of ColumnTypes.Boolean    bool
//
// Other column types come back as the engine's library returns them.
// Column names in one result must be distinct (use AS); a query that
// returns two columns with one name is an error, not a silently lost value.
type Row map[string]any

// Querier runs statements. Both a Database and the transaction handed to a
// Tx callback implement it.
//
// Arguments may be nil, int64 (or another integer type), float64, string,
// []byte, bool or time.Time. They are always bound by the engine, never
// spliced into the SQL text.
type Querier interface {
	// Exec runs SQL without arguments and without results: DDL, possibly
	// several statements separated by semicolons.
	Exec(ctx context.Context, sql string) error
	// Query runs one statement with ? placeholders bound to args, in order,
	// and returns every result row (none for a statement without results;
	// use RETURNING to read generated values). A ? inside a quoted string,
	// a quoted identifier or a comment is not a placeholder. On Postgres the
	// jsonb operators spelled with ? are not available; use their function
	// forms (jsonb_exists and friends).
	Query(ctx context.Context, sql string, args ...any) ([]Row, error)
	// Columns returns the column names of table in declaration order, or
	// none (and no error) when the table does not exist. The name is
	// checked with CheckIdent before any SQL runs.
	Columns(ctx context.Context, table string) ([]string, error)
}

// Database is what a storage driver provides: a connection (or pool) to one
// SQL database, or, on Postgres, one tenant's schema of it.
//
// Concurrency: a Database is safe for concurrent use by many goroutines.
// The tx handed to a Tx callback is not, and must not be used after the
// callback returns.
//
// Retries: a Database never retries a statement that may have run. A caller
// may retry Exec, Query or a whole Tx when the work is idempotent. After an
// error from Query or from the commit of a Tx, a write may or may not have
// been applied (the connection can fail after the engine committed); only
// writes that are safe to repeat (INSERT ... ON CONFLICT DO NOTHING, UPDATE
// to fixed values) may be retried blindly. Errors wrapping ErrUnique or
// ErrInvalidIdent will fail again unchanged.
type Database interface {
	Querier
	// Dialect reports the SQL dialect; it never changes.
	Dialect() Dialect
	// Tx runs fn in a transaction. It commits when fn returns nil and rolls
	// back when fn returns an error (returned unchanged, possibly wrapped) or
	// panics (the panic continues after the rollback). fn must use only tx:
	// the Database itself may be blocked until the transaction ends (SQLite
	// has a single connection), so using it inside fn can deadlock.
	Tx(ctx context.Context, fn func(tx Querier) error) error
	// Close releases the database. Calls after Close fail with an error
	// wrapping ErrClosed; closing twice is not an error.
	Close() error
}
