package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/ledger"
)

// Opener returns a store over fresh, empty storage, and a reopen function
// that returns a new store value over the same storage, sharing no
// in-process state with the first beyond the storage itself.
type Opener func(t *testing.T) (store ledger.Store, reopen func() ledger.Store)

// Fixture values shared by the kit's claims.
const (
	Agent    = "collections"
	Period   = "2026-08"
	Currency = "INR"
	Ceiling  = 50_000
)

// TestStore runs the conformance suite against the stores open returns.
// Each subtest opens its own storage and runs in parallel with the others.
func TestStore(t *testing.T, open Opener) {
	tests := []struct {
		name string
		run  func(t *testing.T, open Opener)
	}{
		{"one run per key under concurrent claims", testConcurrentClaims},
		{"second claim returns the existing run", testSecondClaim},
		{"run id reused under another key", testRunIDTaken},
		{"plan immutable after claim", testPlanImmutable},
		{"resumes from the persisted cursor", testResume},
		{"ceiling checked before the step", testCeiling},
		{"undeclared capability halts", testCapabilityDenied},
		{"failed step needs a reason", testFailureNeedsReason},
		{"failed step halts with reason and detail", testFailureHalts},
		{"store refuses endings without reasons", testStoreRefusesEndings},
		{"full run succeeds", testSucceeds},
		{"a run finished early hands out nothing more", testFinish},
		{"the host halts a run under its own limit", testHostHalt},
		{"tenant key is opaque", testOpaqueTenant},
		{"outcomes are checked against the run", testRecordChecks},
		{"concurrent writes conflict", testConflict},
		{"unknown run", testUnknownRun},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, open)
		})
	}
}

// NewClaim returns a valid claim for the fixture agent and period.
func NewClaim(runID, tenant string, steps ...ledger.Step) ledger.Claim {
	if len(steps) == 0 {
		steps = Steps(3)
	}
	return ledger.Claim{
		RunID: runID, Agent: Agent, TenantKey: tenant, Period: Period,
		Plan:    ledger.Plan{Steps: steps},
		Ceiling: ledger.Money{AmountMinor: Ceiling, Currency: Currency},
	}
}

// Steps returns n plain steps needing no capability and estimating nothing.
func Steps(n int) []ledger.Step {
	steps := make([]ledger.Step, n)
	for i := range steps {
		steps[i] = ledger.Step{Name: fmt.Sprintf("step-%d", i), Input: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}
	}
	return steps
}

// mustClaim claims c and requires it to be acquired.
func mustClaim(t *testing.T, l *ledger.Ledger, c ledger.Claim) ledger.Run {
	t.Helper()
	res, err := l.ClaimRun(context.Background(), c)
	if err != nil {
		t.Fatalf("ClaimRun(%q): %v", c.RunID, err)
	}
	if !res.Acquired {
		t.Fatalf("ClaimRun(%q): got Acquired false, want true", c.RunID)
	}
	return res.Run
}

// mustRecord records o for the step at the run's cursor, the step NextStep
// hands out, and fails the test on error.
func mustRecord(t *testing.T, l *ledger.Ledger, runID string, o ledger.Outcome) ledger.Run {
	t.Helper()
	run, err := l.Run(context.Background(), runID)
	if err != nil {
		t.Fatalf("Run(%q): %v", runID, err)
	}
	updated, err := l.RecordStep(context.Background(), runID, run.Cursor, o)
	if err != nil {
		t.Fatalf("RecordStep(%q, %d): %v", runID, run.Cursor, err)
	}
	return updated
}

func mustNext(t *testing.T, l *ledger.Ledger, runID string, d ledger.Declaration) ledger.Next {
	t.Helper()
	next, err := l.NextStep(context.Background(), runID, d)
	if err != nil {
		t.Fatalf("NextStep(%q): %v", runID, err)
	}
	return next
}

func mustLoad(t *testing.T, s ledger.Store, runID string) ledger.Run {
	t.Helper()
	run, err := s.LoadRun(context.Background(), runID)
	if err != nil {
		t.Fatalf("LoadRun(%q): %v", runID, err)
	}
	return run
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

func planJSON(t *testing.T, p ledger.Plan) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("encode plan: %v", err)
	}
	return string(b)
}

// Guarantee 1. Seen failing (31 extra runs acquired) with the key check
// removed from MemoryStore.InsertRun and with the UNIQUE constraint dropped
// from the migration.
func testConcurrentClaims(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	const n = 32
	results := make([]ledger.ClaimResult, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = l.ClaimRun(context.Background(), NewClaim(fmt.Sprintf("run-%02d", i), "org_abc"))
		})
	}
	close(start)
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("claim %d: got error %v, want nil", i, errs[i])
		}
		if results[i].Acquired {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("acquired claims: got %d, want 1", winners)
	}
	want := results[0].Run.RunID
	for i, r := range results {
		if r.Run.RunID != want {
			t.Errorf("claim %d returned run %q, want the one run %q", i, r.Run.RunID, want)
		}
	}
}

// Guarantee 1: losing a claim returns the existing run and no error.
func testSecondClaim(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	first := mustClaim(t, l, NewClaim("run-1", "org_abc"))
	second := NewClaim("run-2", "org_abc", Steps(5)...)
	res, err := l.ClaimRun(context.Background(), second)
	if err != nil {
		t.Fatalf("second claim: got error %v, want nil", err)
	}
	if res.Acquired {
		t.Fatal("second claim: got Acquired true, want false")
	}
	if res.Run.RunID != first.RunID || len(res.Run.Plan.Steps) != 3 {
		t.Errorf("second claim: got run %q with %d steps, want %q with 3", res.Run.RunID, len(res.Run.Plan.Steps), first.RunID)
	}
	if _, err := store.LoadRun(context.Background(), "run-2"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("LoadRun of the losing run id: got %v, want %v", err, ledger.ErrNotFound)
	}
}

func testRunIDTaken(t *testing.T, open Opener) {
	store, _ := open(t)
	l := ledger.New(store)
	mustClaim(t, l, NewClaim("run-1", "org_abc"))
	c := NewClaim("run-1", "org_xyz")
	_, err := l.ClaimRun(context.Background(), c)
	wantErr(t, "claim with a taken run id", err, ledger.ErrRunIDTaken)
}

// Guarantee 2. Seen failing with checkClaimTerms removed from MemoryStore and
// with the immutability trigger removed from the migration.
func testPlanImmutable(t *testing.T, open Opener) {
	changes := []struct {
		name   string
		change func(r *ledger.Run)
	}{
		{"step renamed", func(r *ledger.Run) { r.Plan.Steps[0].Name = "swapped" }},
		{"step added", func(r *ledger.Run) { r.Plan.Steps = append(r.Plan.Steps, ledger.Step{Name: "extra"}) }},
		{"capability dropped", func(r *ledger.Run) { r.Plan.Steps[1].Capabilities = nil }},
		{"estimate lowered", func(r *ledger.Run) { r.Plan.Steps[1].EstimateMinor = 1 }},
		{"input changed", func(r *ledger.Run) { r.Plan.Steps[0].Input = json.RawMessage(`{"n":99}`) }},
		{"agent changed", func(r *ledger.Run) { r.Agent = "other" }},
		{"period changed", func(r *ledger.Run) { r.Period = "2026-09" }},
		{"ceiling raised", func(r *ledger.Run) { r.Ceiling.AmountMinor *= 10 }},
		{"currency changed", func(r *ledger.Run) { r.Ceiling.Currency = "USD" }},
	}
	store, _ := open(t)
	l := ledger.New(store)
	steps := Steps(3)
	steps[1].Capabilities, steps[1].EstimateMinor = []string{"invoice.read"}, 100
	claimed := mustClaim(t, l, NewClaim("run-1", "org_abc", steps...))
	for _, tc := range changes {
		t.Run(tc.name, func(t *testing.T) {
			run := mustLoad(t, store, claimed.RunID)
			tc.change(&run)
			err := store.UpdateRun(context.Background(), ledger.Update{Run: run})
			wantErr(t, "UpdateRun with "+tc.name, err, ledger.ErrPlanImmutable)
			after := mustLoad(t, store, claimed.RunID)
			if got, want := planJSON(t, after.Plan), planJSON(t, claimed.Plan); got != want {
				t.Errorf("stored plan: got %s, want %s", got, want)
			}
			if after.Agent != claimed.Agent || after.Ceiling != claimed.Ceiling || after.Version != claimed.Version {
				t.Errorf("stored run: got %+v, want it unchanged from %+v", after, claimed)
			}
		})
	}
}

// Guarantee 3. Seen failing (the new ledger restarted at step 0) with the
// ledger caching cursors in memory instead of reading the stored one.
func testResume(t *testing.T, open Opener) {
	store, reopen := open(t)
	runID := startAndCrash(t, store)
	second := ledger.New(reopen())
	for want := 2; want < 5; want++ {
		next := mustNext(t, second, runID, ledger.Declaration{})
		if next.Done || next.Index != want || next.Step.Name != fmt.Sprintf("step-%d", want) {
			t.Fatalf("after resuming: got %+v, want step %d", next, want)
		}
		mustRecord(t, second, runID, ledger.Outcome{OK: true, SpentMinor: 10})
	}
	final, err := second.Run(context.Background(), runID)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if final.Status != ledger.StatusSucceeded || final.SpentMinor != 50 || final.Cursor != 5 {
		t.Errorf("final run: got status %s, spent %d, cursor %d; want succeeded, 50, 5", final.Status, final.SpentMinor, final.Cursor)
	}
}

// startAndCrash records two of five steps with a ledger that is discarded
// when it returns, after it handed out step 2 that nobody recorded.
func startAndCrash(t *testing.T, store ledger.Store) string {
	t.Helper()
	first := ledger.New(store)
	run := mustClaim(t, first, NewClaim("run-1", "org_abc", Steps(5)...))
	for want := range 2 {
		if got := mustNext(t, first, run.RunID, ledger.Declaration{}).Index; got != want {
			t.Fatalf("before the crash: got step %d, want %d", got, want)
		}
		mustRecord(t, first, run.RunID, ledger.Outcome{OK: true, SpentMinor: 10})
	}
	for range 2 {
		if got := mustNext(t, first, run.RunID, ledger.Declaration{}).Index; got != 2 {
			t.Fatalf("before the crash: got step %d, want 2 every time", got)
		}
	}
	return run.RunID
}
