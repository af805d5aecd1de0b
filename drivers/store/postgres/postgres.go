package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/store/sqlstore"
)

// DefaultSchema is the schema used when Options.Schema is empty.
const DefaultSchema = "public"

// Options configure Open.
type Options struct {
	// URL is a Postgres connection string (URL or key=value form).
	URL string
	// Schema is the tenant's schema. It is created if missing and is the
	// only schema on search_path. Empty means DefaultSchema.
	Schema string
	// MaxConns caps the pool; zero keeps pgx's default.
	MaxConns int32
}

// DB is a contracts.Database on one schema. It is safe for concurrent use.
type DB struct {
	pool     *pgxpool.Pool
	schema   string
	maxConns int32 // bounds the stale-statement retries in Query
	closed   atomic.Bool
}

var _ contracts.Database = (*DB)(nil)

// CheckSchema reports whether name may be a tenant schema: a valid
// identifier that Postgres does not reserve. The error wraps
// contracts.ErrInvalidIdent.
func CheckSchema(name string) error {
	if err := contracts.CheckIdent(name); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if strings.HasPrefix(name, "pg_") || name == "information_schema" {
		return fmt.Errorf("schema: %w %q: names starting with pg_ and information_schema belong to Postgres",
			contracts.ErrInvalidIdent, name)
	}
	return nil
}

// Open connects a pool to opts.URL confined to opts.Schema, creating the
// schema if it is missing.
func Open(ctx context.Context, opts Options) (*DB, error) {
	schema := opts.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	if err := CheckSchema(schema); err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	pin := `"` + schema + `"`
	cfg.ConnConfig.RuntimeParams["search_path"] = pin
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error { return checkSearchPath(ctx, c, pin) }
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	d := &DB{pool: pool, schema: schema, maxConns: pool.Config().MaxConns}
	if err := d.createSchema(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres schema %s: %w", schema, err)
	}
	return d, nil
}

// checkSearchPath refuses a connection whose search_path is not the pinned
// one: a connection pooler that drops startup parameters, or a URL that
// overrides them, must not make queries fall back to another schema.
func checkSearchPath(ctx context.Context, c *pgx.Conn, pin string) error {
	var got string
	if err := c.QueryRow(ctx, `SELECT current_setting('search_path')`).Scan(&got); err != nil {
		return fmt.Errorf("check search_path: %w", err)
	}
	if got != pin {
		return fmt.Errorf("search_path is %s, want %s: the server or a pooler ignored the startup parameter", got, pin)
	}
	return nil
}

// createSchema creates the schema unless it exists. Checking first lets a
// role without CREATE on the database use a schema made for it.
func (d *DB) createSchema(ctx context.Context) error {
	rows, err := d.Query(ctx, `SELECT 1 AS one FROM pg_namespace WHERE nspname = ?`, d.schema)
	if err != nil || len(rows) > 0 {
		return err
	}
	err = d.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS "`+d.schema+`"`)
	if errors.Is(err, contracts.ErrUnique) || sqlState(err) == duplicateSchema {
		return nil // created by another process at the same moment
	}
	return err
}

// OpenStore opens the database (see Open) and returns the kernel's store on
// it, creating its tables in the schema if they are missing.
func OpenStore(ctx context.Context, opts Options) (*sqlstore.Store, error) {
	db, err := Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	st, err := sqlstore.New(ctx, db)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open postgres store in schema %s: %w", db.schema, err)
	}
	return st, nil
}

// Schema returns the schema the database is confined to.
func (d *DB) Schema() string { return d.schema }

// Dialect implements contracts.Database.
func (d *DB) Dialect() contracts.Dialect { return contracts.DialectPostgres }

// Exec implements contracts.Querier.
func (d *DB) Exec(ctx context.Context, sql string) error {
	if err := d.ready(ctx); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	return d.wrap(ctx, exec(ctx, d.pool, sql))
}

// Query implements contracts.Querier.
func (d *DB) Query(ctx context.Context, sql string, args ...any) ([]contracts.Row, error) {
	if err := d.ready(ctx); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	rows, err := query(ctx, d.pool, sql, args)
	// Each failure makes one connection forget its stale statement; the
	// retry may land on another connection that still holds one.
	for range d.maxConns {
		if !isStalePlan(err) {
			break
		}
		rows, err = query(ctx, d.pool, sql, args)
	}
	return rows, d.wrap(ctx, err)
}

// Columns implements contracts.Querier.
func (d *DB) Columns(ctx context.Context, table string) ([]string, error) {
	if err := contracts.CheckIdent(table); err != nil {
		return nil, fmt.Errorf("columns: %w", err)
	}
	if err := d.ready(ctx); err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	cols, err := columns(ctx, d.pool, table)
	return cols, d.wrap(ctx, err)
}

// Tx implements contracts.Database.
func (d *DB) Tx(ctx context.Context, fn func(tx contracts.Querier) error) error {
	if err := d.ready(ctx); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return d.wrap(ctx, fmt.Errorf("begin: %w", err))
	}
	done := false
	defer func() {
		if !done {
			// The cause (fn's error or panic) is what the caller needs; a
			// rollback that fails has closed the connection, which aborts.
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err := fn(txQuerier{tx: tx}); err != nil {
		return err
	}
	done = true
	if err := tx.Commit(ctx); err != nil {
		return d.wrap(ctx, fmt.Errorf("commit: %w", err))
	}
	return nil
}

// Close implements contracts.Database.
func (d *DB) Close() error {
	if !d.closed.Swap(true) {
		d.pool.Close()
	}
	return nil
}

func (d *DB) ready(ctx context.Context) error {
	if d.closed.Load() {
		return contracts.ErrClosed
	}
	return ctx.Err()
}

func (d *DB) wrap(ctx context.Context, err error) error {
	return mapError(ctx, err, d.closed.Load())
}

// txQuerier runs statements in one transaction.
type txQuerier struct {
	tx pgx.Tx
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
