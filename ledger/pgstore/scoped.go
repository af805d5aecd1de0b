package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Batcher sends a batch of statements in one pipeline, ended by a single
// Sync. *pgxpool.Pool and *pgx.Conn satisfy it.
type Batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// TenantDB is a [DB] for a pool shared by tenants: every statement runs in
// its own transaction in which app.current_tenant is the DB's tenant.
//
// The tenant travels with the statement. Each call sends set_config(...,
// true) and the statement in one pipeline that ends with one Sync, so both
// run in one implicit transaction: one round trip, no BEGIN or COMMIT, and the
// setting ends at the Sync, before the connection goes back to the pool. If
// set_config fails, Postgres skips the statement.
//
// The store's methods need no transaction around their statements (an update
// is a compare-and-set on the run's version), so New(TenantDB) gives a store
// as safe on a shared pool as [WithTenant] with a transaction per call, for
// fewer round trips. Use WithTenant when several statements must commit
// together.
type TenantDB struct {
	db     Batcher
	tenant string
}

var _ DB = TenantDB{}

// setTenant is the first statement of every TenantDB pipeline.
const setTenant = `select set_config($1, $2, true)`

// Tenant returns a DB over db that runs every statement as tenantKey.
func Tenant(db Batcher, tenantKey string) (TenantDB, error) {
	if tenantKey == "" {
		return TenantDB{}, fmt.Errorf("tenant db: %w", ErrNoTenant)
	}
	return TenantDB{db: db, tenant: tenantKey}, nil
}

// send pipelines the tenant setting and the statement, and returns the
// results positioned at the statement's.
func (t TenantDB) send(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	if t.db == nil {
		return nil, fmt.Errorf("tenant db: %w", ErrNoTenant)
	}
	b := &pgx.Batch{}
	b.Queue(setTenant, TenantSetting, t.tenant)
	b.Queue(sql, args...)
	br := t.db.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		return nil, errors.Join(fmt.Errorf("set tenant: %w", err), br.Close())
	}
	return br, nil
}

// Exec implements DB.
func (t TenantDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	br, err := t.send(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query implements DB. Closing the rows ends the pipeline and returns the
// connection.
func (t TenantDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	br, err := t.send(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// QueryRow implements DB.
func (t TenantDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	br, err := t.send(ctx, sql, args)
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

// batchRows closes the pipeline with the rows.
type batchRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

func (r *batchRows) Close() {
	if r.br == nil {
		return
	}
	r.Rows.Close()
	r.err = r.br.Close()
	r.br = nil
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// batchRow closes the pipeline once the row is scanned.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// errRow is a row whose statement was never run.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
