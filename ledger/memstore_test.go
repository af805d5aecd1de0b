package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sms-baseline/sms/ledger"
	"github.com/sms-baseline/sms/ledger/storetest"
)

// TestMemoryStore runs the store conformance kit, which carries the tests of
// guarantees 1 to 5 and 7, against the in-memory store. The zero value is
// used on purpose: it must need no setup.
func TestMemoryStore(t *testing.T) {
	storetest.TestStore(t, func(t *testing.T) (ledger.Store, func() ledger.Store) {
		store := new(ledger.MemoryStore)
		return store, func() ledger.Store { return store }
	})
}

func TestMemoryStoreRefusesBadWrites(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	store := ledger.NewMemoryStore()
	l := ledger.New(store)
	res, err := l.ClaimRun(ctx, storetest.NewClaim("run-1", "org_abc"))
	if err != nil {
		t.Fatalf("ClaimRun: %v", err)
	}
	valid := res.Run
	badInput := valid
	badInput.RunID = "run-2"
	badInput.Period = "2026-09"
	badInput.Plan = ledger.Plan{Steps: []ledger.Step{{Name: "x", Input: json.RawMessage(`{`)}}}
	changedInput := valid
	changedInput.Plan = badInput.Plan
	empty := valid
	empty.Agent = ""
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"insert with cancelled context", func() error { _, _, err := store.InsertRun(cancelled, valid); return err }, context.Canceled},
		{"insert of an invalid run", func() error { _, _, err := store.InsertRun(ctx, empty); return err }, ledger.ErrInvalidRun},
		{"insert with unencodable input", func() error { _, _, err := store.InsertRun(ctx, badInput); return err }, nil},
		{"load with cancelled context", func() error { _, err := store.LoadRun(cancelled, "run-1"); return err }, context.Canceled},
		{"update with cancelled context", func() error { return store.UpdateRun(cancelled, ledger.Update{Run: valid}) }, context.Canceled},
		{"update with unencodable input", func() error { return store.UpdateRun(ctx, ledger.Update{Run: changedInput}) }, ledger.ErrPlanImmutable},
		{"load steps with cancelled context", func() error { _, err := store.LoadSteps(cancelled, "run-1"); return err }, context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("got error %v, want %v", err, errOrAny(tc.want))
			}
		})
	}
}

func errOrAny(err error) any {
	if err == nil {
		return "an error"
	}
	return err
}

// The store hands out copies: changing a loaded run must not change the
// stored plan behind the store's back.
func TestMemoryStoreCopiesRuns(t *testing.T) {
	ctx := context.Background()
	store := ledger.NewMemoryStore()
	steps := storetest.Steps(2)
	steps[0].Capabilities = []string{"invoice.read"}
	res, err := ledger.New(store).ClaimRun(ctx, storetest.NewClaim("run-1", "org_abc", steps...))
	if err != nil {
		t.Fatalf("ClaimRun: %v", err)
	}
	res.Run.Plan.Steps[0].Name = "mutated"
	res.Run.Plan.Steps[0].Capabilities[0] = "mutated"
	steps[0].Input[0] = '['
	got, err := store.LoadRun(ctx, "run-1")
	if err != nil {
		t.Fatalf("LoadRun: %v", err)
	}
	if s := got.Plan.Steps[0]; s.Name != "step-0" || s.Capabilities[0] != "invoice.read" || string(s.Input) != `{"n":0}` {
		t.Errorf("stored step: got %+v, want it unchanged", s)
	}
}
