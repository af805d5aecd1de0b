package ledger_test

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/ledger"
)

// The host owns the loop and every effect: the ledger only says what to do
// next and records what happened.
func Example() {
	ctx := context.Background()
	l := ledger.New(ledger.NewMemoryStore())

	claim, err := l.ClaimRun(ctx, ledger.Claim{
		RunID:     "run-2026-08-org_abc",
		Agent:     "collections",
		TenantKey: "org_abc",
		Period:    "2026-08",
		Plan: ledger.Plan{Steps: []ledger.Step{
			{Name: "read-invoices", Capabilities: []string{"invoice.read"}},
			{Name: "send-reminders", Capabilities: []string{"email.send"}, EstimateMinor: 1_000},
		}},
		Ceiling: ledger.Money{AmountMinor: 50_000, Currency: "INR"},
	})
	if err != nil || !claim.Acquired {
		return // an error, or another scheduler tick owns this run
	}
	decl := ledger.Declaration{Capabilities: []string{"invoice.read", "email.send"}}
	for {
		next, err := l.NextStep(ctx, claim.Run.RunID, decl)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if next.Done {
			fmt.Println("done:", next.Status, next.Reason)
			return
		}
		fmt.Println("perform:", next.Step.Name) // the host does the work here
		if _, err := l.RecordStep(ctx, claim.Run.RunID, next.Index, ledger.Outcome{OK: true, SpentMinor: 700}); err != nil {
			fmt.Println("error:", err)
			return
		}
	}
	// Output:
	// perform: read-invoices
	// perform: send-reminders
	// done: succeeded
}
