package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/ledger"
)

// Guarantee 4. Seen failing (the step was handed out) with ceilingGate
// removed from the gate chain.
func testCeiling(t *testing.T, open Opener) {
	tests := []struct {
		name     string
		spent    []int64 // outcomes recorded before asking for the next step
		estimate int64   // estimate of the step asked for
		halt     bool
	}{
		{name: "budget left", spent: []int64{20_000}, estimate: 0, halt: false},
		{name: "estimate fits exactly", spent: []int64{20_000}, estimate: 30_000, halt: false},
		{name: "ceiling reached", spent: []int64{20_000, 30_000}, estimate: 0, halt: true},
		{name: "ceiling crossed by the last spend", spent: []int64{45_000, 10_000}, estimate: 0, halt: true},
		{name: "estimate would cross", spent: []int64{20_000}, estimate: 30_001, halt: true},
	}
	store, _ := open(t)
	l := ledger.New(store)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			steps := Steps(len(tc.spent) + 2)
			steps[len(tc.spent)].EstimateMinor = tc.estimate
			run := mustClaim(t, l, NewClaim("run-"+tc.name, "org_"+string(rune('a'+i)), steps...))
			for _, spent := range tc.spent {
				mustRecord(t, l, run.RunID, ledger.Outcome{OK: true, SpentMinor: spent})
			}
			next := mustNext(t, l, run.RunID, ledger.Declaration{})
			if !tc.halt {
				if next.Done || next.Index != len(tc.spent) {
					t.Fatalf("NextStep: got %+v, want step %d handed out", next, len(tc.spent))
				}
				return
			}
			if !next.Done || next.Reason != ledger.ReasonCostCeilingReached || next.Detail == "" {
				t.Fatalf("NextStep: got %+v, want done with %s and a detail", next, ledger.ReasonCostCeilingReached)
			}
			stored := mustLoad(t, store, run.RunID)
			if stored.Status != ledger.StatusHalted || stored.Reason != ledger.ReasonCostCeilingReached || stored.Cursor != len(tc.spent) {
				t.Errorf("stored run: got %s/%s at cursor %d, want halted/%s at %d",
					stored.Status, stored.Reason, stored.Cursor, ledger.ReasonCostCeilingReached, len(tc.spent))
			}
		})
	}
}

// Guarantee 5. Seen failing (the step was handed out) with capabilityGate
// removed from the gate chain.
func testCapabilityDenied(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	steps := Steps(3)
	steps[0].Capabilities = []string{"invoice.read"}
	steps[1].Capabilities = []string{"invoice.read", "email.send", "sms.send"}
	run := mustClaim(t, l, NewClaim("run-1", "org_abc", steps...))
	decl := ledger.Declaration{Capabilities: []string{"invoice.read", "sms.send"}}
	if next := mustNext(t, l, run.RunID, decl); next.Done || next.Index != 0 {
		t.Fatalf("step 0 with its capability declared: got %+v, want it handed out", next)
	}
	mustRecord(t, l, run.RunID, ledger.Outcome{OK: true})
	next := mustNext(t, l, run.RunID, decl)
	if !next.Done || next.Reason != ledger.ReasonCapabilityDenied {
		t.Fatalf("step 1: got %+v, want done with %s", next, ledger.ReasonCapabilityDenied)
	}
	if !strings.Contains(next.Detail, `"email.send"`) || strings.Contains(next.Detail, `"sms.send"`) {
		t.Errorf("detail: got %q, want it to name \"email.send\" and only it", next.Detail)
	}
	stored := mustLoad(t, store, run.RunID)
	if stored.Status != ledger.StatusHalted || stored.Detail != next.Detail {
		t.Errorf("stored run: got %s with detail %q, want halted with %q", stored.Status, stored.Detail, next.Detail)
	}
	full := ledger.Declaration{Capabilities: []string{"invoice.read", "email.send", "sms.send"}}
	if again := mustNext(t, l, run.RunID, full); !again.Done || again.Reason != ledger.ReasonCapabilityDenied {
		t.Errorf("after the halt: got %+v, want the run to stay halted", again)
	}
}

// Guarantee 7. Seen failing with the reason check removed from
// Outcome.validate.
func testFailureNeedsReason(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	run := mustClaim(t, l, NewClaim("run-1", "org_abc"))
	for _, reason := range []string{"", "  \t"} {
		_, err := l.RecordStep(context.Background(), run.RunID, 0, ledger.Outcome{OK: false, FailureReason: reason})
		wantErr(t, "RecordStep failed without reason", err, ledger.ErrMissingFailureReason)
	}
	stored := mustLoad(t, store, run.RunID)
	if stored.Cursor != 0 || stored.Status != ledger.StatusRunning || stored.Version != run.Version {
		t.Errorf("stored run: got cursor %d, status %s, version %d; want it untouched", stored.Cursor, stored.Status, stored.Version)
	}
}

// Guarantee 7.
func testFailureHalts(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	run := mustClaim(t, l, NewClaim("run-1", "org_abc"))
	mustRecord(t, l, run.RunID, ledger.Outcome{OK: true, SpentMinor: 5})
	got := mustRecord(t, l, run.RunID, ledger.Outcome{OK: false, FailureReason: "gateway refused the mandate", SpentMinor: 7})
	if got.Status != ledger.StatusHalted || got.Reason != ledger.ReasonStepFailed || !strings.Contains(got.Detail, "gateway refused the mandate") {
		t.Fatalf("RecordStep: got %s/%s %q, want halted/%s with the failure reason", got.Status, got.Reason, got.Detail, ledger.ReasonStepFailed)
	}
	next := mustNext(t, l, run.RunID, ledger.Declaration{})
	if !next.Done || next.Status != ledger.StatusHalted || next.Detail != got.Detail {
		t.Errorf("NextStep after failure: got %+v, want done, halted, %q", next, got.Detail)
	}
	steps, err := l.Steps(context.Background(), run.RunID)
	if err != nil {
		t.Fatalf("Steps: %v", err)
	}
	want := []ledger.StepRecord{{Index: 0, OK: true, SpentMinor: 5}, {Index: 1, FailureReason: "gateway refused the mandate", SpentMinor: 7}}
	if len(steps) != len(want) || steps[0] != want[0] || steps[1] != want[1] {
		t.Errorf("Steps: got %+v, want %+v", steps, want)
	}
}

// Guarantee 7, in storage. Seen failing with the CHECK constraints removed
// from the migration, and with CheckRun and CheckStepRecord removed from
// MemoryStore.UpdateRun.
func testStoreRefusesEndings(t *testing.T, open Opener) {
	failed := &ledger.StepRecord{Index: 0, OK: false, FailureReason: " "}
	tests := []struct {
		name string
		edit func(r *ledger.Run)
		step *ledger.StepRecord
		want error
	}{
		{"halt without reason", func(r *ledger.Run) { r.Status, r.Detail = ledger.StatusHalted, "stopped" }, nil, ledger.ErrInvalidEnding},
		{"halt without detail", func(r *ledger.Run) { r.Status, r.Reason = ledger.StatusHalted, ledger.ReasonStepFailed }, nil, ledger.ErrInvalidEnding},
		{"reason on a running run", func(r *ledger.Run) { r.Reason, r.Detail = ledger.ReasonStepFailed, "x" }, nil, ledger.ErrInvalidEnding},
		{"failed step without reason", func(r *ledger.Run) { r.Cursor = 1 }, failed, ledger.ErrMissingFailureReason},
		{"negative spend", func(r *ledger.Run) { r.SpentMinor = -1 }, nil, ledger.ErrInvalidRun},
		{"unknown status", func(r *ledger.Run) { r.Status = "paused" }, nil, ledger.ErrInvalidRun},
	}
	store, _ := open(t)
	l := ledger.New(store)
	run := mustClaim(t, l, NewClaim("run-1", "org_abc"))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next := mustLoad(t, store, run.RunID)
			tc.edit(&next)
			err := store.UpdateRun(context.Background(), ledger.Update{Run: next, Step: tc.step})
			wantErr(t, "UpdateRun", err, tc.want)
			if after := mustLoad(t, store, run.RunID); after.Version != run.Version || after.Status != ledger.StatusRunning {
				t.Errorf("stored run: got version %d status %s, want %d running", after.Version, after.Status, run.Version)
			}
		})
	}
}

func testSucceeds(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	run := mustClaim(t, l, NewClaim("run-1", "org_abc"))
	for {
		next := mustNext(t, l, run.RunID, ledger.Declaration{})
		if next.Done {
			if next.Status != ledger.StatusSucceeded || next.Reason != "" || next.Index != 3 {
				t.Fatalf("end: got %+v, want succeeded at index 3 without reason", next)
			}
			break
		}
		mustRecord(t, l, run.RunID, ledger.Outcome{OK: true, SpentMinor: 100, Currency: Currency})
	}
	final := mustLoad(t, store, run.RunID)
	if final.SpentMinor != 300 || final.Version != 3 {
		t.Errorf("final run: got spent %d version %d, want 300 and 3", final.SpentMinor, final.Version)
	}
	steps, err := store.LoadSteps(context.Background(), run.RunID)
	if err != nil || len(steps) != 3 {
		t.Errorf("LoadSteps: got %d steps, %v; want 3, nil", len(steps), err)
	}
}

// The tenant key is stored and compared verbatim: keys that differ only in
// case or spacing, or look like other syntaxes, are distinct tenants.
func testOpaqueTenant(t *testing.T, open Opener) {
	keys := []string{
		"org_abc", "ORG_ABC", "org_abc ", " org_abc", "org:abc/eu-west#1", "tenant=a,b;c",
		"5f0c3a8e-2b7d-4c61-9a1e-3d2f4b6c8e90", "not-a-uuid-5f0c3a8e", "' OR '1'='1", "% _ \\", "ütf-8 租户 🚀",
	}
	store, _ := open(t)
	l := ledger.New(store)
	for i, key := range keys {
		res, err := l.ClaimRun(context.Background(), NewClaim("run-"+string(rune('a'+i)), key))
		if err != nil || !res.Acquired {
			t.Fatalf("claim for tenant %q: got acquired %v, %v; want a new run", key, res.Acquired, err)
		}
		if res.Run.TenantKey != key {
			t.Errorf("stored tenant: got %q, want %q", res.Run.TenantKey, key)
		}
		if got := mustLoad(t, store, res.Run.RunID).TenantKey; got != key {
			t.Errorf("loaded tenant: got %q, want %q", got, key)
		}
	}
}

// A host that ends its work early finishes the run: it succeeds at its
// cursor with its spend, NextStep hands out nothing more, and neither a
// second Finish nor an outcome changes it. Seen failing when Finish left
// the run running.
func testFinish(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	ctx := context.Background()
	run := mustClaim(t, l, NewClaim("run-1", "org_abc"))
	mustNext(t, l, run.RunID, ledger.Declaration{})
	mustRecord(t, l, run.RunID, ledger.Outcome{OK: true, SpentMinor: 40, Currency: Currency})
	done, err := l.Finish(ctx, run.RunID)
	if err != nil || done.Status != ledger.StatusSucceeded || done.Cursor != 1 || done.SpentMinor != 40 {
		t.Fatalf("Finish: got %+v, %v; want succeeded at cursor 1 with 40 spent", done, err)
	}
	if next := mustNext(t, l, run.RunID, ledger.Declaration{}); !next.Done || next.Status != ledger.StatusSucceeded {
		t.Errorf("NextStep after Finish: got %+v, want done and succeeded", next)
	}
	_, err = l.Finish(ctx, run.RunID)
	wantErr(t, "second Finish", err, ledger.ErrRunFinished)
	_, err = l.RecordStep(ctx, run.RunID, 1, ledger.Outcome{OK: true})
	wantErr(t, "RecordStep after Finish", err, ledger.ErrRunFinished)
	if got := mustLoad(t, store, run.RunID); got.Version != done.Version || got.Cursor != 1 {
		t.Errorf("stored run: got %+v, want version %d at cursor 1", got, done.Version)
	}
}

// The host halts a run under a limit of its own: the run ends halted with
// the reason and detail, hands out nothing more, and a halt without a
// detail changes nothing. Seen failing with Halt writing a succeeded run.
func testHostHalt(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	ctx := context.Background()
	run := mustClaim(t, l, NewClaim("run-1", "org_abc"))
	_, err := l.Halt(ctx, run.RunID, ledger.ReasonLimitReached, " ")
	wantErr(t, "Halt without a detail", err, ledger.ErrInvalidEnding)
	done, err := l.Halt(ctx, run.RunID, ledger.ReasonLimitReached, "user ann used 1000 of 1000 tokens")
	if err != nil || done.Status != ledger.StatusHalted || done.Reason != ledger.ReasonLimitReached {
		t.Fatalf("Halt: got %+v, %v; want halted with limit_reached", done, err)
	}
	next := mustNext(t, l, run.RunID, ledger.Declaration{})
	if !next.Done || next.Status != ledger.StatusHalted || next.Detail != "user ann used 1000 of 1000 tokens" {
		t.Errorf("NextStep after Halt: got %+v, want done, halted, with the detail", next)
	}
	_, err = l.Halt(ctx, run.RunID, ledger.ReasonLimitReached, "again")
	wantErr(t, "second Halt", err, ledger.ErrRunFinished)
}
