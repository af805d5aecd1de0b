package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sms-baseline/sms/ledger"
	"github.com/sms-baseline/sms/ledger/internal/pgtest"
	"github.com/sms-baseline/sms/ledger/pgstore"
	"github.com/sms-baseline/sms/ledger/storetest"
)

// Tenants used by the row-level security tests. The keys are opaque: one
// looks like a UUID, the other like nothing in particular.
const (
	tenantA = "5f0c3a8e-2b7d-4c61-9a1e-3d2f4b6c8e90"
	tenantB = "org:b/eu-west#1"
)

// rlsFixture is a database with one run per tenant, claimed through the
// unprivileged role, and an app-role pool of the given size.
type rlsFixture struct {
	admin *pgxpool.Pool
	app   *pgxpool.Pool
}

func newRLSFixture(t *testing.T, maxConns int32) rlsFixture {
	t.Helper()
	db := pgtest.NewDatabase(t)
	f := rlsFixture{admin: db.Pool(t, 2), app: db.AppPool(t, maxConns)}
	requireUnprivileged(t, f.app)
	for _, c := range []ledger.Claim{storetest.NewClaim("run-a", tenantA), storetest.NewClaim("run-b", tenantB)} {
		inTenant(t, f.app, c.TenantKey, func(l *ledger.Ledger, _ pgx.Tx) {
			if _, err := l.ClaimRun(context.Background(), c); err != nil {
				t.Fatalf("claim %s as its tenant: %v", c.RunID, err)
			}
			if _, err := l.RecordStep(context.Background(), c.RunID, 0, ledger.Outcome{OK: true, SpentMinor: 1}); err != nil {
				t.Fatalf("record step of %s as its tenant: %v", c.RunID, err)
			}
		})
	}
	return f
}

// requireUnprivileged proves the premise: row-level security binds the role.
func requireUnprivileged(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	var super, bypass, owner bool
	err := pool.QueryRow(context.Background(), `select r.rolsuper, r.rolbypassrls,
			exists (select 1 from pg_tables where schemaname = 'ledger' and tableowner = current_user)
		from pg_roles r where r.rolname = current_user`).Scan(&super, &bypass, &owner)
	if err != nil {
		t.Fatalf("inspect role: %v", err)
	}
	if super || bypass || owner {
		t.Fatalf("test role: got superuser %v, bypassrls %v, owner %v; want all false", super, bypass, owner)
	}
}

func inTenant(t *testing.T, pool *pgxpool.Pool, tenant string, fn func(l *ledger.Ledger, tx pgx.Tx)) {
	t.Helper()
	err := pgstore.WithTenant(context.Background(), pool, tenant, func(tx pgx.Tx) error {
		fn(ledger.New(pgstore.New(tx)), tx)
		return nil
	})
	if err != nil {
		t.Fatalf("WithTenant(%q): %v", tenant, err)
	}
}

func count(t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, sql string) int {
	t.Helper()
	var n int
	if err := q.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// Seen failing with the tenant policy on ledger.runs replaced by
// `using (true)`.
func TestTenantCannotReadOthersRuns(t *testing.T) {
	f := newRLSFixture(t, 4)
	ctx := context.Background()
	inTenant(t, f.app, tenantA, func(l *ledger.Ledger, tx pgx.Tx) {
		if _, err := l.Run(ctx, "run-b"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("tenant A loading B's run: got %v, want %v", err, ledger.ErrNotFound)
		}
		if _, err := l.NextStep(ctx, "run-b", ledger.Declaration{}); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("tenant A asking B's next step: got %v, want %v", err, ledger.ErrNotFound)
		}
		if n := count(t, tx, `select count(*) from ledger.runs`); n != 1 {
			t.Errorf("runs visible to tenant A: got %d, want 1", n)
		}
		if n := count(t, tx, `select count(*) from ledger.steps where run_id = 'run-b'`); n != 0 {
			t.Errorf("B's steps visible to tenant A: got %d, want 0", n)
		}
	})
}

func TestTenantCannotChangeOthersRuns(t *testing.T) {
	f := newRLSFixture(t, 4)
	ctx := context.Background()
	runB, err := pgstore.New(f.admin).LoadRun(ctx, "run-b")
	if err != nil {
		t.Fatalf("load B's run as admin: %v", err)
	}
	inTenant(t, f.app, tenantA, func(l *ledger.Ledger, tx pgx.Tx) {
		halted := runB
		halted.Status, halted.Reason, halted.Detail = ledger.StatusHalted, "x", "y"
		if err := pgstore.New(tx).UpdateRun(ctx, ledger.Update{Run: halted}); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("tenant A updating B's run: got %v, want %v", err, ledger.ErrNotFound)
		}
		if tag, err := tx.Exec(ctx, `update ledger.runs set detail = 'hijacked' where run_id = 'run-b'`); err != nil || tag.RowsAffected() != 0 {
			t.Errorf("raw update of B's run as A: got %d rows, %v; want 0, nil", tag.RowsAffected(), err)
		}
	})
	err = pgstore.WithTenant(ctx, f.app, tenantA, func(tx pgx.Tx) error {
		_, err := ledger.New(pgstore.New(tx)).ClaimRun(ctx, storetest.NewClaim("run-b2", tenantB))
		return err
	})
	wantRLSViolation(t, "tenant A claiming a run for B", err)
	if after, err := pgstore.New(f.admin).LoadRun(ctx, "run-b"); err != nil || after.Version != runB.Version || after.Detail != "" {
		t.Errorf("B's run after A's attempts: got %+v, %v; want it unchanged", after, err)
	}
}

// With no tenant set, every row is denied, for reads and writes alike.
func TestNoTenantDeniesEverything(t *testing.T) {
	f := newRLSFixture(t, 4)
	ctx := context.Background()
	store := pgstore.New(f.app)
	if n := count(t, f.app, `select count(*) from ledger.runs`); n != 0 {
		t.Errorf("runs visible without a tenant: got %d, want 0", n)
	}
	if n := count(t, f.app, `select count(*) from ledger.steps`); n != 0 {
		t.Errorf("steps visible without a tenant: got %d, want 0", n)
	}
	if _, err := store.LoadRun(ctx, "run-a"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("LoadRun without a tenant: got %v, want %v", err, ledger.ErrNotFound)
	}
	_, err := ledger.New(store).ClaimRun(ctx, storetest.NewClaim("run-c", tenantA))
	wantRLSViolation(t, "claim without a tenant", err)
	// set_config(..., true) outside a transaction lasts one statement: it
	// errs towards denial: the next statement sees nothing.
	if _, err := f.app.Exec(ctx, `select set_config('app.current_tenant', $1, true)`, tenantA); err != nil {
		t.Fatalf("set_config: %v", err)
	}
	if n := count(t, f.app, `select count(*) from ledger.runs`); n != 0 {
		t.Errorf("runs visible after a transaction-local set_config outside a transaction: got %d, want 0", n)
	}
}

// A single pooled connection serves tenant A in a transaction, then tenant
// B, then a caller with no tenant; A's key never outlives its transaction.
// Seen failing with WithTenant calling set_config(..., false).
func TestPooledConnectionDoesNotLeakTenant(t *testing.T) {
	f := newRLSFixture(t, 1)
	ctx := context.Background()
	var pidA, pidB int
	inTenant(t, f.app, tenantA, func(l *ledger.Ledger, tx pgx.Tx) {
		pidA = count(t, tx, `select pg_backend_pid()`)
		if _, err := l.Run(ctx, "run-a"); err != nil {
			t.Fatalf("tenant A loading its run: %v", err)
		}
	})
	inTenant(t, f.app, tenantB, func(l *ledger.Ledger, tx pgx.Tx) {
		pidB = count(t, tx, `select pg_backend_pid()`)
		if _, err := l.Run(ctx, "run-a"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("tenant B on A's connection loading A's run: got %v, want %v", err, ledger.ErrNotFound)
		}
		if n := count(t, tx, `select count(*) from ledger.runs`); n != 1 {
			t.Errorf("runs visible to B: got %d, want 1", n)
		}
	})
	if pidA != pidB {
		t.Fatalf("backend pids: got %d then %d, want one connection reused", pidA, pidB)
	}
	var leaked string
	if err := f.app.QueryRow(ctx, `select coalesce(current_setting('app.current_tenant', true), '')`).Scan(&leaked); err != nil {
		t.Fatalf("read setting: %v", err)
	}
	if leaked != "" {
		t.Errorf("app.current_tenant after the transactions: got %q, want empty", leaked)
	}
	if n := count(t, f.app, `select count(*) from ledger.runs`); n != 0 {
		t.Errorf("runs visible on the reused connection with no tenant: got %d, want 0", n)
	}
}

func TestWithTenant(t *testing.T) {
	f := newRLSFixture(t, 2)
	ctx := context.Background()
	if err := pgstore.WithTenant(ctx, f.app, "", func(pgx.Tx) error { return nil }); !errors.Is(err, pgstore.ErrNoTenant) {
		t.Errorf("empty tenant: got %v, want %v", err, pgstore.ErrNoTenant)
	}
	boom := errors.New("host gave up")
	err := pgstore.WithTenant(ctx, f.app, tenantA, func(tx pgx.Tx) error {
		if _, err := ledger.New(pgstore.New(tx)).ClaimRun(ctx, storetest.NewClaim("run-a2", tenantA, storetest.Steps(1)...)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("failing function: got %v, want %v", err, boom)
	}
	if _, err := pgstore.New(f.admin).LoadRun(ctx, "run-a2"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("run claimed in a rolled-back transaction: got %v, want %v", err, ledger.ErrNotFound)
	}
}

func wantRLSViolation(t *testing.T, what string, err error) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Errorf("%s: got %v, want a row-level security violation (42501)", what, err)
	}
}
