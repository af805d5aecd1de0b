package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/ledger"
	"github.com/sms-baseline/sms/ledger/storetest"
)

func TestClaimValidation(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *ledger.Claim)
		want error
		msg  string
	}{
		{"missing run id", func(c *ledger.Claim) { c.RunID = "" }, ledger.ErrInvalidClaim, "runId is required"},
		{"missing agent", func(c *ledger.Claim) { c.Agent = "" }, ledger.ErrInvalidClaim, "agent is required"},
		{"missing tenant", func(c *ledger.Claim) { c.TenantKey = "" }, ledger.ErrInvalidClaim, "tenantKey is required"},
		{"tenant with NUL", func(c *ledger.Claim) { c.TenantKey = "org\x00abc" }, ledger.ErrInvalidClaim, "tenantKey contains a NUL byte"},
		{"tenant not UTF-8", func(c *ledger.Claim) { c.TenantKey = "org\xff" }, ledger.ErrInvalidClaim, "tenantKey is not valid UTF-8"},
		{"missing period", func(c *ledger.Claim) { c.Period = "" }, ledger.ErrInvalidClaim, "period is required"},
		{"no steps", func(c *ledger.Claim) { c.Plan.Steps = nil }, ledger.ErrInvalidClaim, "plan has no steps"},
		{"unnamed step", func(c *ledger.Claim) { c.Plan.Steps[1].Name = "" }, ledger.ErrInvalidClaim, "plan step 1: name is required"},
		{"empty capability", func(c *ledger.Claim) { c.Plan.Steps[0].Capabilities = []string{""} }, ledger.ErrInvalidClaim, "capability is required"},
		{"negative estimate", func(c *ledger.Claim) { c.Plan.Steps[0].EstimateMinor = -5 }, ledger.ErrInvalidAmount, "estimateMinor must not be negative"},
		{"invalid input", func(c *ledger.Claim) { c.Plan.Steps[0].Input = json.RawMessage("{") }, ledger.ErrInvalidClaim, "not valid JSON"},
		{"negative ceiling", func(c *ledger.Claim) { c.Ceiling.AmountMinor = -1 }, ledger.ErrInvalidAmount, "ceiling: invalid amount"},
		{"no currency", func(c *ledger.Claim) { c.Ceiling.Currency = "" }, ledger.ErrInvalidCurrency, "ceiling"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := storetest.NewClaim("run-1", "org_abc")
			tc.edit(&c)
			_, err := ledger.New(ledger.NewMemoryStore()).ClaimRun(context.Background(), c)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got error %v, want %v saying %q", err, tc.want, tc.msg)
			}
		})
	}
}

// scriptedStore fails chosen calls and otherwise delegates to a MemoryStore.
type scriptedStore struct {
	*ledger.MemoryStore
	updateErrs []error // returned, in order, by the next UpdateRun calls
	stepsErr   error
}

func (s *scriptedStore) UpdateRun(ctx context.Context, u ledger.Update) error {
	if len(s.updateErrs) > 0 {
		err := s.updateErrs[0]
		s.updateErrs = s.updateErrs[1:]
		return err
	}
	return s.MemoryStore.UpdateRun(ctx, u)
}

func (s *scriptedStore) LoadSteps(ctx context.Context, runID string) ([]ledger.StepRecord, error) {
	if s.stepsErr != nil {
		return nil, s.stepsErr
	}
	return s.MemoryStore.LoadSteps(ctx, runID)
}

// deniedClaim claims a run whose first step needs an undeclared capability,
// so the first NextStep must write a halt.
func deniedClaim(t *testing.T, store ledger.Store) *ledger.Ledger {
	t.Helper()
	steps := storetest.Steps(2)
	steps[0].Capabilities = []string{"email.send"}
	l := ledger.New(store)
	if _, err := l.ClaimRun(context.Background(), storetest.NewClaim("run-1", "org_abc", steps...)); err != nil {
		t.Fatalf("ClaimRun: %v", err)
	}
	return l
}

func TestNextStepHaltRetries(t *testing.T) {
	boom := errors.New("disk on fire")
	tests := []struct {
		name       string
		updateErrs []error
		want       error // nil: the halt is written and reported
	}{
		{"conflict then success", []error{ledger.ErrConflict}, nil},
		{"two conflicts then success", []error{ledger.ErrConflict, ledger.ErrConflict}, nil},
		{"conflicts every time", []error{ledger.ErrConflict, ledger.ErrConflict, ledger.ErrConflict}, ledger.ErrConflict},
		{"store failure", []error{boom}, boom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &scriptedStore{MemoryStore: ledger.NewMemoryStore()}
			l := deniedClaim(t, store)
			store.updateErrs = tc.updateErrs
			next, err := l.NextStep(context.Background(), "run-1", ledger.Declaration{})
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("got error %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil || !next.Done || next.Reason != ledger.ReasonCapabilityDenied {
				t.Fatalf("got %+v, %v; want a capability_denied halt", next, err)
			}
		})
	}
}

func TestStoreErrorsAreWrapped(t *testing.T) {
	boom := errors.New("disk on fire")
	ctx := context.Background()
	store := &scriptedStore{MemoryStore: ledger.NewMemoryStore()}
	l := deniedClaim(t, store)
	store.updateErrs, store.stepsErr = []error{boom}, boom
	_, recordErr := l.RecordStep(ctx, "run-1", 0, ledger.Outcome{OK: true})
	_, stepsErr := l.Steps(ctx, "run-1")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, claimErr := l.ClaimRun(cancelled, storetest.NewClaim("run-2", "org_abc"))
	for name, err := range map[string]error{"RecordStep": recordErr, "Steps": stepsErr, "ClaimRun": claimErr} {
		if err == nil || !strings.Contains(err.Error(), "run-") {
			t.Errorf("%s: got %v, want an error naming the run", name, err)
		}
	}
}

// A running run whose cursor is past its last step (which the ledger never
// writes) is ended as succeeded rather than indexed out of range.
func TestCursorPastPlan(t *testing.T) {
	ctx := context.Background()
	store := ledger.NewMemoryStore()
	l := ledger.New(store)
	res, err := l.ClaimRun(ctx, storetest.NewClaim("run-1", "org_abc"))
	if err != nil {
		t.Fatalf("ClaimRun: %v", err)
	}
	run := res.Run
	run.Cursor = len(run.Plan.Steps)
	if err := store.UpdateRun(ctx, ledger.Update{Run: run}); err != nil {
		t.Fatalf("UpdateRun: %v", err)
	}
	if _, err := l.RecordStep(ctx, "run-1", 3, ledger.Outcome{OK: true}); !errors.Is(err, ledger.ErrStepOutOfOrder) {
		t.Errorf("RecordStep past the plan: got %v, want %v", err, ledger.ErrStepOutOfOrder)
	}
	next, err := l.NextStep(ctx, "run-1", ledger.Declaration{})
	if err != nil || !next.Done || next.Status != ledger.StatusSucceeded {
		t.Errorf("NextStep: got %+v, %v; want done and succeeded", next, err)
	}
}

func TestCheckRun(t *testing.T) {
	base := ledger.Run{
		RunID: "r", Agent: "a", TenantKey: "t", Period: "p",
		Ceiling: ledger.Money{AmountMinor: 1, Currency: "INR"}, Status: ledger.StatusRunning,
	}
	tests := []struct {
		name string
		edit func(r *ledger.Run)
		want error
	}{
		{"valid", func(*ledger.Run) {}, nil},
		{"zero ceiling", func(r *ledger.Run) { r.Ceiling.AmountMinor = 0 }, ledger.ErrInvalidRun},
		{"bad currency", func(r *ledger.Run) { r.Ceiling.Currency = "IN1" }, ledger.ErrInvalidRun},
		{"negative cursor", func(r *ledger.Run) { r.Cursor = -1 }, ledger.ErrInvalidRun},
		{"halted with both", func(r *ledger.Run) { r.Status, r.Reason, r.Detail = ledger.StatusHalted, "x", "y" }, nil},
		{"succeeded with detail", func(r *ledger.Run) { r.Status, r.Detail = ledger.StatusSucceeded, "y" }, ledger.ErrInvalidEnding},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			tc.edit(&r)
			if err := ledger.CheckRun(r); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if err := ledger.CheckStepRecord(ledger.StepRecord{Index: -1, OK: true}); !errors.Is(err, ledger.ErrInvalidRun) {
		t.Errorf("step with negative index: got %v, want %v", err, ledger.ErrInvalidRun)
	}
}

func TestCapabilityDetailNamesEveryMissingCapability(t *testing.T) {
	steps := storetest.Steps(1)
	steps[0].Capabilities = []string{"invoice.read", "email.send", "sms.send"}
	l := ledger.New(ledger.NewMemoryStore())
	ctx := context.Background()
	if _, err := l.ClaimRun(ctx, storetest.NewClaim("run-1", "org_abc", steps...)); err != nil {
		t.Fatalf("ClaimRun: %v", err)
	}
	next, err := l.NextStep(ctx, "run-1", ledger.Declaration{Capabilities: []string{"invoice.read"}})
	want := `step 0 "step-0" needs capabilities "email.send", "sms.send", which agent "collections" did not declare`
	if err != nil || next.Detail != want {
		t.Errorf("detail: got %q, %v; want %q", next.Detail, err, want)
	}
}
