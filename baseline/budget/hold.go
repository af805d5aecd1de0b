package budget

import (
	"fmt"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/ledger"
)

// A run's ledger ceiling is the money left when it began, so it alone
// cannot see the steps of other runs for the same user running at the
// same time. Each step a run hands out therefore holds its estimate
// against the user's and the tenant's cost limits until it is recorded:
// a step whose estimate, with what was spent and what other steps hold,
// would cross a limit halts, however many turns run at once.

// holdOf is what a step holds: its estimate, and at least one minor
// unit, so that with no estimate a step is handed out only while some
// money is neither spent nor held by another step.
func holdOf(estimate int64) int64 { return max(estimate, 1) }

// hold holds estimate against user's and the tenant's cost limits for a
// step about to start. It returns a *contracts.BudgetHalt, holding
// nothing, when the estimate and the money spent and held would cross a
// limit.
func (m *Meter) hold(user string, estimate int64) error {
	c := chainOf("", user)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll()
	for _, s := range c.all() {
		limit := m.limitOf(s).CostMinor
		if limit <= 0 {
			continue
		}
		if left := limit - m.used[s].CostMinor - m.held[s]; estimate > left {
			return &contracts.BudgetHalt{Reason: string(ledger.ReasonCostCeilingReached), Detail: fmt.Sprintf(
				"the next step estimates %d but only %d of the %d %s limit of %s is left in period %s (%d spent, %d held by steps running now)",
				estimate, max(left, 0), limit, m.cfg.currency(), s, m.period, m.used[s].CostMinor, m.held[s])}
		}
	}
	for _, s := range c.all() {
		if m.limitOf(s).CostMinor > 0 {
			m.held[s] += estimate
		}
	}
	return nil
}

// settle lets go of what hold held for user's step and counts u, the
// step's use, against the user and the tenant, in one step: no other
// step sees the money neither held nor spent.
func (m *Meter) settle(user string, estimate int64, u contracts.Usage) {
	c := chainOf("", user)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll()
	for _, s := range c.all() {
		if m.limitOf(s).CostMinor > 0 {
			if m.held[s] -= estimate; m.held[s] <= 0 {
				delete(m.held, s)
			}
		}
		m.chargeLocked(s, u)
	}
}
