package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sms-baseline/sms/ledger"
	"github.com/sms-baseline/sms/ledger/storetest"
)

// BenchmarkLedgerMemory measures one claim and ten steps on the memory store.
// The steps/s metric counts recorded steps.
func BenchmarkLedgerMemory(b *testing.B) {
	ctx := context.Background()
	l := ledger.New(ledger.NewMemoryStore())
	const steps = 10
	i := 0
	for b.Loop() {
		runID := fmt.Sprintf("run-%d", i)
		i++
		res, err := l.ClaimRun(ctx, storetest.NewClaim(runID, runID, storetest.Steps(steps)...))
		if err != nil {
			b.Fatal(err)
		}
		for {
			next, err := l.NextStep(ctx, res.Run.RunID, ledger.Declaration{})
			if err != nil {
				b.Fatal(err)
			}
			if next.Done {
				break
			}
			if _, err := l.RecordStep(ctx, res.Run.RunID, next.Index, ledger.Outcome{OK: true, SpentMinor: 1}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*steps)/b.Elapsed().Seconds(), "steps/s")
}
