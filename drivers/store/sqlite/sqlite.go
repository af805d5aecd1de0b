package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/store/sqlstore"
)

// Memory is the path of a private in-memory database.
const Memory = ":memory:"

// params configure every connection: the busy timeout first (the others may
// need the lock), then WAL and full sync for durability, transactions that
// take the write lock when they begin rather than failing to upgrade, and no
// double-quoted string literals, so a misspelt quoted column is an error as
// on Postgres instead of reading as its own name.
const params = "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)" +
	"&_pragma=synchronous(FULL)&_txlock=immediate&_dqs=0"

// DB is a contracts.Database on one SQLite file. It is safe for concurrent
// use; statements run one at a time on its single connection.
type DB struct {
	db     *sql.DB
	stmts  *stmtCache
	closed atomic.Bool
}

var _ contracts.Database = (*DB)(nil)

// Open opens the SQLite database at path, creating the file if it is
// missing (its directory must exist), or a private in-memory database for
// Memory.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("open sqlite: the path is empty; use a file path or sqlite.Memory")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open sqlite %q: the path may not contain ? or #", path)
	}
	db, err := sql.Open("sqlite", path+"?"+params)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// One connection, kept forever: see the package documentation.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	d := &DB{db: db, stmts: newStmtCache()}
	if err := d.checkJournal(ctx, path); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return d, nil
}

// checkJournal connects and confirms the journal mode, since SQLite falls
// back silently when a file system cannot do WAL.
func (d *DB) checkJournal(ctx context.Context, path string) error {
	var mode string
	if err := d.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return d.wrap(ctx, err)
	}
	want := "wal"
	if path == Memory {
		want = "memory"
	}
	if !strings.EqualFold(mode, want) {
		return fmt.Errorf("journal mode is %q, want %q", mode, want)
	}
	return nil
}

// OpenStore opens the database at path (see Open) and returns the kernel's
// store on it, creating its tables if they are missing.
func OpenStore(ctx context.Context, path string) (*sqlstore.Store, error) {
	db, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	st, err := sqlstore.New(ctx, db)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	return st, nil
}

// Dialect implements contracts.Database.
func (d *DB) Dialect() contracts.Dialect { return contracts.DialectSQLite }

// Exec implements contracts.Querier.
func (d *DB) Exec(ctx context.Context, sql string) error {
	if err := d.ready(ctx); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	return d.wrap(ctx, exec(ctx, d.db, sql))
}

// Query implements contracts.Querier.
func (d *DB) Query(ctx context.Context, sql string, args ...any) ([]contracts.Row, error) {
	if err := d.ready(ctx); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	rows, err := d.query(ctx, sql, args)
	return rows, d.wrap(ctx, err)
}

// query runs text through the statement cache.
func (d *DB) query(ctx context.Context, text string, args []any) ([]contracts.Row, error) {
	e, err := d.stmts.acquire(ctx, d.db, text)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	if e == nil {
		return query(ctx, d.db, text, args)
	}
	defer d.stmts.release(e)
	return read(e.stmt.QueryContext(ctx, args...))
}

// Columns implements contracts.Querier.
func (d *DB) Columns(ctx context.Context, table string) ([]string, error) {
	if err := contracts.CheckIdent(table); err != nil {
		return nil, fmt.Errorf("columns: %w", err)
	}
	if err := d.ready(ctx); err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	cols, err := columns(ctx, d.db, table)
	return cols, d.wrap(ctx, err)
}

// Tx implements contracts.Database.
func (d *DB) Tx(ctx context.Context, fn func(tx contracts.Querier) error) error {
	if err := d.ready(ctx); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return d.wrap(ctx, fmt.Errorf("begin: %w", err))
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback() // the cause (fn's error or panic) is what the caller needs
		}
	}()
	if err := fn(txQuerier{tx: tx}); err != nil {
		return err
	}
	done = true // Commit ends the transaction whether it succeeds or not
	if err := tx.Commit(); err != nil {
		return d.wrap(ctx, fmt.Errorf("commit: %w", err))
	}
	return nil
}

// Close implements contracts.Database.
func (d *DB) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	d.stmts.close()
	if err := d.db.Close(); err != nil {
		return fmt.Errorf("close sqlite: %w", err)
	}
	return nil
}

// ready reports why no statement may start: the database is closed or ctx
// is done.
func (d *DB) ready(ctx context.Context) error {
	if d.closed.Load() {
		return contracts.ErrClosed
	}
	return ctx.Err()
}

// wrap maps engine errors onto the contracts' sentinels.
func (d *DB) wrap(ctx context.Context, err error) error {
	return mapError(ctx, err, d.closed.Load())
}

func mapError(ctx context.Context, err error, closed bool) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	if closed && !errors.Is(err, contracts.ErrClosed) {
		return fmt.Errorf("%w: %w", contracts.ErrClosed, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %w", contracts.ErrUnique, err)
		}
	}
	return err
}

// txQuerier runs statements in one transaction.
type txQuerier struct {
	tx *sql.Tx
}

func (q txQuerier) Exec(ctx context.Context, sql string) error {
	return mapError(ctx, exec(ctx, q.tx, sql), false)
}

func (q txQuerier) Query(ctx context.Context, sql string, args ...any) ([]contracts.Row, error) {
	rows, err := query(ctx, q.tx, sql, args)
	return rows, mapError(ctx, err, false)
}

func (q txQuerier) Columns(ctx context.Context, table string) ([]string, error) {
	if err := contracts.CheckIdent(table); err != nil {
		return nil, fmt.Errorf("columns: %w", err)
	}
	cols, err := columns(ctx, q.tx, table)
	return cols, mapError(ctx, err, false)
}
