package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sms-baseline/sms/ledger"
	"github.com/sms-baseline/sms/ledger/internal/pgtest"
	"github.com/sms-baseline/sms/ledger/pgstore"
	"github.com/sms-baseline/sms/ledger/storetest"
)

var errInjected = errors.New("injected failure")

// failingDB delegates to a real database but fails the call numbered failAt
// (counting from 1 over Exec, Query and QueryRow).
type failingDB struct {
	pgstore.DB
	calls, failAt int
}

func (f *failingDB) fail() bool {
	f.calls++
	return f.calls == f.failAt
}

func (f *failingDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if f.fail() {
		return pgconn.CommandTag{}, errInjected
	}
	return f.DB.Exec(ctx, sql, args...)
}

func (f *failingDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if f.fail() {
		return nil, errInjected
	}
	return f.DB.Query(ctx, sql, args...)
}

func (f *failingDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if f.fail() {
		return errRow{}
	}
	return f.DB.QueryRow(ctx, sql, args...)
}

type errRow struct{}

func (errRow) Scan(...any) error { return errInjected }

// Every store call reports a database failure as an error naming the
// operation, never as a sentinel the ledger would act on.
func TestDatabaseFailures(t *testing.T) {
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 2)
	ctx := context.Background()
	claim := storetest.NewClaim("run-1", "org_abc")
	res, err := ledger.New(pgstore.New(pool)).ClaimRun(ctx, claim)
	if err != nil {
		t.Fatalf("ClaimRun: %v", err)
	}
	stale := res.Run
	stale.Version = 7
	tests := []struct {
		name   string
		failAt int
		call   func(s *pgstore.Store) error
		want   string
	}{
		{"insert", 1, func(s *pgstore.Store) error { _, _, err := s.InsertRun(ctx, res.Run); return err }, "insert run"},
		{"reading the winning claim", 2, func(s *pgstore.Store) error { _, _, err := s.InsertRun(ctx, res.Run); return err }, "load existing"},
		{"load", 1, func(s *pgstore.Store) error { _, err := s.LoadRun(ctx, "run-1"); return err }, "load run"},
		{"update", 1, func(s *pgstore.Store) error { return s.UpdateRun(ctx, ledger.Update{Run: res.Run}) }, "update run"},
		{"explaining a missed update", 2, func(s *pgstore.Store) error { return s.UpdateRun(ctx, ledger.Update{Run: stale}) }, "update run"},
		{"load steps", 1, func(s *pgstore.Store) error { _, err := s.LoadSteps(ctx, "run-1"); return err }, "load steps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(pgstore.New(&failingDB{DB: pool, failAt: tc.failAt}))
			if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %v wrapped in %q", err, errInjected, tc.want)
			}
			for _, sentinel := range []error{ledger.ErrNotFound, ledger.ErrConflict, ledger.ErrRunIDTaken} {
				if errors.Is(err, sentinel) {
					t.Errorf("got %v, want no ledger sentinel", err)
				}
			}
		})
	}
}

func TestClosedPool(t *testing.T) {
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 2)
	pool.Close()
	ctx := context.Background()
	tests := map[string]func() error{
		"Migrate": func() error { return pgstore.Migrate(ctx, pool) },
		"VerifyInstall": func() error {
			_, err := pgstore.VerifyInstall(ctx, pool)
			return err
		},
		"WithTenant": func() error {
			return pgstore.WithTenant(ctx, pool, "org_abc", func(pgx.Tx) error { return nil })
		},
	}
	for name, call := range tests {
		if err := call(); err == nil || !strings.Contains(err.Error(), "closed pool") {
			t.Errorf("%s on a closed pool: got %v, want a closed-pool error", name, err)
		}
	}
}

// A tenant key Postgres cannot store fails in set_config, before fn runs.
func TestWithTenantSetConfigFailure(t *testing.T) {
	db := pgtest.NewDatabase(t)
	pool := db.AppPool(t, 1)
	ran := false
	err := pgstore.WithTenant(context.Background(), pool, "org\x00abc", func(pgx.Tx) error { ran = true; return nil })
	if err == nil || !strings.Contains(err.Error(), "set tenant") || ran {
		t.Errorf("got %v with fn run %v, want a set tenant error and fn not run", err, ran)
	}
}
