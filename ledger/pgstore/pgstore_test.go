package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sms-baseline/sms/ledger"
	"github.com/sms-baseline/sms/ledger/internal/pgtest"
	"github.com/sms-baseline/sms/ledger/pgstore"
	"github.com/sms-baseline/sms/ledger/storetest"
)

// TestStore runs the conformance kit, which carries the tests of guarantees
// 1 to 5 and 7, against Postgres. Each subtest gets its own database; the
// reopened store uses a new pool, so nothing but the database carries over.
func TestStore(t *testing.T) {
	pgtest.AdminURL(t)
	storetest.TestStore(t, func(t *testing.T) (ledger.Store, func() ledger.Store) {
		db := pgtest.NewDatabase(t)
		return pgstore.New(db.Pool(t, 32)), func() ledger.Store { return pgstore.New(db.Pool(t, 4)) }
	})
}

func TestVerifyInstall(t *testing.T) {
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 2)
	ctx := context.Background()
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatalf("second Migrate: got %v, want nil (migrations are re-runnable)", err)
	}
	checks, err := pgstore.VerifyInstall(ctx, pool)
	if err != nil {
		t.Fatalf("VerifyInstall: %v", err)
	}
	if len(checks) != 9 {
		t.Errorf("checks: got %d, want 9", len(checks))
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("check %q: got ok false, want true", c.Name)
		}
	}
}

// Each case breaks one piece of the schema inside a transaction that is
// rolled back, and requires verify_install to report exactly that piece.
func TestVerifyInstallReportsBreakage(t *testing.T) {
	tests := []struct {
		name  string
		ddl   string
		check string
		also  []string // further checks the breakage takes down
	}{
		{"unique dropped", `alter table ledger.runs drop constraint runs_one_per_period`, "one run per agent, tenant and period", nil},
		{"trigger dropped", `drop trigger runs_claim_immutable on ledger.runs`, "plan immutable after claim", nil},
		{"trigger disabled", `alter table ledger.runs disable trigger runs_claim_immutable`, "plan immutable after claim", nil},
		{"halt check dropped", `alter table ledger.runs drop constraint runs_halt_has_reason`, "halted runs carry a reason and detail", nil},
		{"step check dropped", `alter table ledger.steps drop constraint steps_failure_has_reason`, "failed steps carry a reason", nil},
		{"rls disabled", `alter table ledger.steps disable row level security`, "row-level security enabled", nil},
		{"rls not forced", `alter table ledger.runs no force row level security`, "row-level security forced", nil},
		{"open policy", `create policy open on ledger.runs using (true)`, "every policy is tenant-scoped", nil},
		{"policy dropped", `drop policy steps_tenant_isolation on ledger.steps`, "every policy is tenant-scoped", nil},
		{"float money", `alter table ledger.steps add column refund_minor double precision`, "money is integer minor units", nil},
		{"numeric money", `alter table ledger.runs alter column spent_minor type numeric`, "money is integer minor units", nil},
		{"table dropped", `drop table ledger.steps`, "tables exist", []string{"failed steps carry a reason",
			"row-level security enabled", "row-level security forced", "every policy is tenant-scoped"}},
	}
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 2)
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatalf("begin: %v", err)
			}
			defer tx.Rollback(ctx) //nolint:errcheck // the rollback is the point
			if _, err := tx.Exec(ctx, tc.ddl); err != nil {
				t.Fatalf("break schema: %v", err)
			}
			checks, err := pgstore.VerifyInstall(ctx, tx)
			if err != nil {
				t.Fatalf("VerifyInstall: %v", err)
			}
			for _, c := range checks {
				if want := c.Name != tc.check && !slices.Contains(tc.also, c.Name); c.OK != want {
					t.Errorf("check %q: got ok %v, want %v", c.Name, c.OK, want)
				}
			}
		})
	}
}

// The guarantees hold for any SQL, not only for the store's statements.
// Seen failing with the UNIQUE constraint, the trigger and the CHECKs each
// removed from the migration.
func TestSchemaRefusesDirectWrites(t *testing.T) {
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 2)
	ctx := context.Background()
	l := ledger.New(pgstore.New(pool))
	if _, err := l.ClaimRun(ctx, storetest.NewClaim("run-1", "org_abc")); err != nil {
		t.Fatalf("ClaimRun: %v", err)
	}
	tests := []struct {
		name     string
		sql      string
		wantCode string
		wantName string // constraint name, when the refusal is a constraint
	}{
		{"second run for the key", `insert into ledger.runs (run_id, agent, tenant_key, period, plan_json, ceiling_minor, currency)
			values ('run-2', 'collections', 'org_abc', '2026-08', '{"steps":[]}', 1, 'INR')`, "23505", "runs_one_per_period"},
		{"plan swapped", `update ledger.runs set plan_json = '{"steps":[{"name":"wire-money"}]}' where run_id = 'run-1'`, "LDG01", ""},
		{"ceiling raised", `update ledger.runs set ceiling_minor = ceiling_minor * 100 where run_id = 'run-1'`, "LDG01", ""},
		{"halt without reason", `update ledger.runs set status = 'halted', detail = 'stopped' where run_id = 'run-1'`, "23514", "runs_halt_has_reason"},
		{"halt without detail", `update ledger.runs set status = 'halted', reason = 'step_failed' where run_id = 'run-1'`, "23514", "runs_halt_has_reason"},
		{"failed step without reason", `insert into ledger.steps (run_id, idx, tenant_key, ok, failure_reason, spent_minor)
			values ('run-1', 0, 'org_abc', false, ' ', 0)`, "23514", "steps_failure_has_reason"},
		{"negative spend", `update ledger.runs set spent_minor = -1 where run_id = 'run-1'`, "23514", "runs_spent_non_negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pool.Exec(ctx, tc.sql)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) {
				t.Fatalf("got %v, want SQLSTATE %s", err, tc.wantCode)
			}
			if pgErr.Code != tc.wantCode || pgErr.ConstraintName != tc.wantName {
				t.Errorf("got SQLSTATE %s constraint %q, want %s %q", pgErr.Code, pgErr.ConstraintName, tc.wantCode, tc.wantName)
			}
		})
	}
}

func TestDecodeAndEncodeErrors(t *testing.T) {
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 2)
	ctx := context.Background()
	store := pgstore.New(pool)
	if _, err := pool.Exec(ctx, `insert into ledger.runs (run_id, agent, tenant_key, period, plan_json, ceiling_minor, currency)
		values ('run-1', 'a', 't', 'p', '{"steps":[{"name":"x","estimateMinor":1.5}]}', 1, 'INR')`); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if _, err := store.LoadRun(ctx, "run-1"); err == nil || !strings.Contains(err.Error(), "whole number") {
		t.Errorf("LoadRun of a plan with a fractional estimate: got %v, want a decode error", err)
	}
	bad := ledger.Run{RunID: "run-2", Plan: ledger.Plan{Steps: []ledger.Step{{Name: "x", Input: json.RawMessage("{")}}}}
	if _, _, err := store.InsertRun(ctx, bad); err == nil || !strings.Contains(err.Error(), "encode plan") {
		t.Errorf("InsertRun with invalid input: got %v, want an encode error", err)
	}
	if err := store.UpdateRun(ctx, ledger.Update{Run: bad}); err == nil || !strings.Contains(err.Error(), "encode plan") {
		t.Errorf("UpdateRun with invalid input: got %v, want an encode error", err)
	}
}
