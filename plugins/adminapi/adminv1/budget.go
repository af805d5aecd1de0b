package adminv1

import (
	"context"
	"net/http"
)

// BudgetUse is an amount of each thing a budget counts, used in a period
// or allowed in it; as a limit, 0 is no limit.
type BudgetUse struct {
	// Tokens are model tokens, input and output together.
	Tokens int64 `json:"tokens"`
	// CostMinor is their cost in minor units of the budget's currency.
	CostMinor int64 `json:"costMinor"`
	// WallMillis is wall time spent in agent code.
	WallMillis int64 `json:"wallMillis"`
	// Rows are rows written on agent code's behalf.
	Rows int64 `json:"rows"`
}

// BudgetLimits are a budget's limits per tenant, per user and per agent
// plugin.
type BudgetLimits struct {
	Tenant BudgetUse `json:"tenant"`
	User   BudgetUse `json:"user"`
	Plugin BudgetUse `json:"plugin"`
}

// Budget is the answer of GET RouteBudget: the tenant's limits and what
// the tenant, each user and each agent plugin used in the current period.
type Budget struct {
	Period   string               `json:"period"`
	Currency string               `json:"currency"`
	Limits   BudgetLimits         `json:"limits"`
	Tenant   BudgetUse            `json:"tenant"`
	Users    map[string]BudgetUse `json:"users"`
	Plugins  map[string]BudgetUse `json:"plugins"`
}

// BudgetHalt is why the budget stopped a chat turn: Reason is a stable
// code, Detail the sentence for the user.
type BudgetHalt struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// Event types of the budget in the event log.
const (
	// EventBudgetExceeded: a plugin, a user or the tenant reached a limit
	// and agent work was refused for it (once per scope, limit and period).
	EventBudgetExceeded = "budget/exceeded"
	// EventBudgetHalted: the budget stopped a chat turn or a job.
	EventBudgetHalted = "budget/halted"
)

// Budget returns the tenant's budget and what it counted this period.
func (c *Client) Budget(ctx context.Context) (Budget, error) {
	var out Budget
	err := c.do(ctx, call{method: http.MethodGet, path: RouteBudget}, &out)
	return out, err
}
