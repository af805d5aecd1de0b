package budget_test

import (
	"context"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline/budget"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// BenchmarkMeterCall is what the Meter adds to one call into agent code:
// Admit before it and Spent after it, with limits at every level, from
// every core at once.
func BenchmarkMeterCall(b *testing.B) {
	lim := contracts.Usage{Tokens: 1 << 40, CostMinor: 1 << 40, WallMillis: 1 << 40, Rows: 1 << 40}
	m := budget.NewMeter(budget.Config{Limits: contracts.BudgetLimits{Tenant: lim, User: lim, Plugin: lim}}, nil)
	ctx := context.Background()
	p := kernel.Payer{Plugin: "agent.hello", RequestedBy: "user:sam"}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := m.Admit(ctx, p); err != nil {
				b.Fatal(err)
			}
			m.Spent(ctx, p, kernel.Use{Wall: 40 * time.Microsecond})
		}
	})
}
