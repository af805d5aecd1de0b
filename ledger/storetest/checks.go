package storetest

import (
	"context"
	"math"
	"testing"

	"github.com/sms-baseline/sms/ledger"
)

func testRecordChecks(t *testing.T, open Opener) {
	tests := []struct {
		name   string
		before []ledger.Outcome // recorded first, at steps 0, 1, ...
		index  int
		o      ledger.Outcome
		want   error
	}{
		{name: "step ahead of the cursor", index: 1, o: ledger.Outcome{OK: true}, want: ledger.ErrStepOutOfOrder},
		{name: "step already recorded", before: []ledger.Outcome{{OK: true}}, index: 0, o: ledger.Outcome{OK: true}, want: ledger.ErrStepOutOfOrder},
		{name: "currency mismatch", index: 0, o: ledger.Outcome{OK: true, Currency: "USD"}, want: ledger.ErrCurrencyMismatch},
		{name: "negative spend", index: 0, o: ledger.Outcome{OK: true, SpentMinor: -1}, want: ledger.ErrInvalidAmount},
		{name: "spend overflows", before: []ledger.Outcome{{OK: true, SpentMinor: math.MaxInt64}}, index: 1, o: ledger.Outcome{OK: true, SpentMinor: 1}, want: ledger.ErrInvalidAmount},
		{name: "run already halted", before: []ledger.Outcome{{FailureReason: "boom"}}, index: 1, o: ledger.Outcome{OK: true}, want: ledger.ErrRunFinished},
		{name: "run already succeeded", before: []ledger.Outcome{{OK: true}, {OK: true}, {OK: true}}, index: 3, o: ledger.Outcome{OK: true}, want: ledger.ErrRunFinished},
	}
	store, _ := open(t)
	l := ledger.New(store)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := mustClaim(t, l, NewClaim("run-"+tc.name, "org_"+string(rune('a'+i))))
			for _, o := range tc.before {
				mustRecord(t, l, run.RunID, o)
			}
			before := mustLoad(t, store, run.RunID)
			_, err := l.RecordStep(context.Background(), run.RunID, tc.index, tc.o)
			wantErr(t, "RecordStep", err, tc.want)
			if after := mustLoad(t, store, run.RunID); after.Version != before.Version {
				t.Errorf("stored version: got %d, want %d (unchanged)", after.Version, before.Version)
			}
		})
	}
}

// Two writers that read the same version: the second loses, and a step is
// never recorded twice.
func testConflict(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	run := mustClaim(t, l, NewClaim("run-1", "org_abc"))
	ctx := context.Background()
	a, b := mustLoad(t, store, run.RunID), mustLoad(t, store, run.RunID)
	a.Cursor, b.Cursor = 1, 1
	if err := store.UpdateRun(ctx, ledger.Update{Run: a, Step: &ledger.StepRecord{Index: 0, OK: true}}); err != nil {
		t.Fatalf("first writer: got %v, want nil", err)
	}
	err := store.UpdateRun(ctx, ledger.Update{Run: b, Step: &ledger.StepRecord{Index: 0, OK: true}})
	wantErr(t, "second writer on a stale version", err, ledger.ErrConflict)
	fresh := mustLoad(t, store, run.RunID)
	fresh.Cursor = 2
	err = store.UpdateRun(ctx, ledger.Update{Run: fresh, Step: &ledger.StepRecord{Index: 0, OK: true}})
	wantErr(t, "recording step 0 again", err, ledger.ErrConflict)
	if got := mustLoad(t, store, run.RunID); got.Version != 1 || got.Cursor != 1 {
		t.Errorf("stored run: got version %d cursor %d, want 1 and 1", got.Version, got.Cursor)
	}
}

func testUnknownRun(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	ctx := context.Background()
	calls := map[string]func() error{
		"NextStep": func() error { _, err := l.NextStep(ctx, "nope", ledger.Declaration{}); return err },
		"RecordStep": func() error {
			_, err := l.RecordStep(ctx, "nope", 0, ledger.Outcome{OK: true})
			return err
		},
		"Run":   func() error { _, err := l.Run(ctx, "nope"); return err },
		"Steps": func() error { _, err := l.Steps(ctx, "nope"); return err },
		"UpdateRun": func() error {
			c := NewClaim("nope", "org_abc")
			return store.UpdateRun(ctx, ledger.Update{Run: ledger.Run{
				RunID: c.RunID, Agent: c.Agent, TenantKey: c.TenantKey, Period: c.Period,
				Plan: c.Plan, Ceiling: c.Ceiling, Status: ledger.StatusRunning,
			}})
		},
	}
	for name, call := range calls {
		wantErr(t, name+" of an unknown run", call(), ledger.ErrNotFound)
	}
	steps, err := store.LoadSteps(ctx, "nope")
	if err != nil || len(steps) != 0 {
		t.Errorf("LoadSteps of an unknown run: got %v, %v; want none, nil", steps, err)
	}
}
