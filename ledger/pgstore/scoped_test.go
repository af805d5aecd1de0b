package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sms-baseline/sms/ledger"
	"github.com/sms-baseline/sms/ledger/pgstore"
	"github.com/sms-baseline/sms/ledger/storetest"
)

func tenantDB(t *testing.T, db pgstore.Batcher, tenant string) pgstore.TenantDB {
	t.Helper()
	tdb, err := pgstore.Tenant(db, tenant)
	if err != nil {
		t.Fatalf("Tenant(%q): %v", tenant, err)
	}
	return tdb
}

// A ledger over a TenantDB walks its own tenant's runs and cannot see,
// change or claim another's. Seen failing with the pipeline's set_config
// dropped (every statement then runs without a tenant and is denied) and
// with the tenant policy on ledger.runs replaced by `using (true)`.
func TestTenantDBConfines(t *testing.T) {
	f := newRLSFixture(t, 4)
	ctx := context.Background()
	db := tenantDB(t, f.app, tenantA)
	l := ledger.New(pgstore.New(db))

	claim := storetest.NewClaim("run-a3", tenantA, storetest.Steps(2)...)
	claim.Period = "another period"
	if res, err := l.ClaimRun(ctx, claim); err != nil || !res.Acquired {
		t.Fatalf("claim as A: got %+v, %v; want acquired", res, err)
	}
	for i := range 2 {
		next, err := l.NextStep(ctx, claim.RunID, ledger.Declaration{})
		if err != nil || next.Index != i {
			t.Fatalf("next step %d: got %+v, %v", i, next, err)
		}
		if _, err := l.RecordStep(ctx, claim.RunID, i, ledger.Outcome{OK: true, SpentMinor: 1}); err != nil {
			t.Fatalf("record step %d: %v", i, err)
		}
	}
	steps, err := l.Steps(ctx, claim.RunID)
	if err != nil || len(steps) != 2 {
		t.Fatalf("steps of A's run: got %v, %v; want 2", steps, err)
	}
	if n := count(t, db, `select count(*) from ledger.runs`); n != 2 {
		t.Errorf("runs visible to A: got %d, want 2", n)
	}
	if _, err := l.Run(ctx, "run-b"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("A loading B's run: got %v, want %v", err, ledger.ErrNotFound)
	}
	if tag, err := db.Exec(ctx, `update ledger.runs set detail = 'hijacked' where run_id = 'run-b'`); err != nil || tag.RowsAffected() != 0 {
		t.Errorf("raw update of B's run as A: got %d rows, %v; want 0, nil", tag.RowsAffected(), err)
	}
	_, err = l.ClaimRun(ctx, storetest.NewClaim("run-b3", tenantB))
	wantRLSViolation(t, "A claiming a run for B", err)
}

// One pooled connection serves A's statements, a failing statement, then a
// caller with no tenant, which sees nothing: the setting ends with each
// pipeline. Seen failing with set_config(..., false) in the pipeline.
func TestTenantDBDoesNotLeak(t *testing.T) {
	f := newRLSFixture(t, 1)
	ctx := context.Background()
	db := tenantDB(t, f.app, tenantA)
	pidA := count(t, db, `select pg_backend_pid()`)
	if n := count(t, db, `select count(*) from ledger.runs`); n != 1 {
		t.Fatalf("runs visible to A: got %d, want 1", n)
	}
	if _, err := db.Exec(ctx, `select 1/0`); err == nil {
		t.Fatal("a failing statement: got nil error")
	}
	rows, err := db.Query(ctx, `select run_id from ledger.runs`)
	if err != nil {
		t.Fatalf("query as A: %v", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatalf("scan: %v", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) != 1 || ids[0] != "run-a" {
		t.Errorf("A's runs by Query: got %v, %v; want [run-a]", ids, err)
	}
	if pid := count(t, f.app, `select pg_backend_pid()`); pid != pidA {
		t.Fatalf("backend pids: got %d then %d, want one connection reused", pidA, pid)
	}
	var leaked string
	if err := f.app.QueryRow(ctx, `select coalesce(current_setting('app.current_tenant', true), '')`).Scan(&leaked); err != nil {
		t.Fatalf("read setting: %v", err)
	}
	if leaked != "" {
		t.Errorf("app.current_tenant after A's statements: got %q, want empty", leaked)
	}
	if n := count(t, f.app, `select count(*) from ledger.runs`); n != 0 {
		t.Errorf("runs visible on the reused connection with no tenant: got %d, want 0", n)
	}
}

func TestTenantDBNeedsTenant(t *testing.T) {
	if _, err := pgstore.Tenant(nil, ""); !errors.Is(err, pgstore.ErrNoTenant) {
		t.Errorf("empty tenant: got %v, want %v", err, pgstore.ErrNoTenant)
	}
	var zero pgstore.TenantDB
	if _, err := pgstore.New(zero).LoadRun(context.Background(), "run-a"); !errors.Is(err, pgstore.ErrNoTenant) {
		t.Errorf("zero TenantDB: got %v, want %v", err, pgstore.ErrNoTenant)
	}
}
