package contracts

import (
	"context"
	"fmt"
)

// BudgetKey is the system-only key whose value is the tenant's Budgets.
// System plugins (the agent loop, the scheduler, the judge and the
// invariants) read it; agent code never does.
const BudgetKey = "budget"

// Usage is an amount of each thing a budget counts, used in one period or
// allowed in it. As a limit, 0 means no limit.
type Usage struct {
	// Tokens are model tokens, input and output together.
	Tokens int64 `json:"tokens"`
	// CostMinor is what those tokens cost, in minor units of the budget's
	// currency.
	CostMinor int64 `json:"costMinor"`
	// WallMillis is wall time spent in agent code, in milliseconds.
	WallMillis int64 `json:"wallMillis"`
	// Rows are rows written on agent code's behalf.
	Rows int64 `json:"rows"`
}

// Budgets is the value of BudgetKey: the tenant's budgets, what each of
// its users and agent plugins used in the current period, and the run
// ledger that agent work is accounted through.
type Budgets interface {
	// Begin claims a ledger run for one piece of agent work (a chat turn,
	// a scheduled job), before any of it runs. A user or tenant whose
	// budget is used up gets a *BudgetHalt and the work does not start.
	Begin(ctx context.Context, w Work) (BudgetRun, error)
	// Report returns the limits and what was used in the current period.
	Report(ctx context.Context) (BudgetReport, error)
}

// Work is a piece of agent work to account.
type Work struct {
	// ID is unique to this piece of work (a turn's id, a job's name and
	// due time): the ledger keeps one run per agent and ID.
	ID string
	// Agent names what does the work: the chat agent, or the plugin whose
	// job runs.
	Agent string
	// User is who the work acts for; its usage counts against them and
	// the tenant.
	User string
	// Steps is the most steps the work may take (model calls and tool
	// calls); the ledger never hands out more.
	Steps int
	// Model is set for work that calls the model (a chat turn): only the
	// limits on tokens and cost stop it. Work that runs plugin code (a
	// job) stops at any limit of its user or the tenant.
	Model bool
}

// BudgetRun is a claimed run. Its methods are called one after another:
// Next, then Record for the step Next handed out, and Finish or Halt when
// the work ends.
type BudgetRun interface {
	// Next asks the ledger for the next step. A *BudgetHalt means the step
	// must not run: the budget cannot pay for it, or the plan is used up;
	// the run has ended with that reason.
	Next(ctx context.Context) error
	// Record reports the step Next handed out, with what it used.
	Record(ctx context.Context, s StepUse) error
	// Finish ends the run when the work ended before its last step.
	Finish(ctx context.Context) error
}

// StepUse is what one step of a run used.
type StepUse struct {
	// Kind is "model" or "tool"; Name names the model call's stop or the
	// tool.
	Kind, Name string
	// Tokens are the tokens of a model call (none for a tool call).
	Tokens TokenUsage
	// Failed is why the step failed; empty when it succeeded.
	Failed string
}

// BudgetHalt is why agent work was stopped for its budget: Reason is a
// stable code (the run ledger's), Detail the sentence to show the user.
type BudgetHalt struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

func (h *BudgetHalt) Error() string { return fmt.Sprintf("budget: %s: %s", h.Reason, h.Detail) }

// BudgetReport is the budgets and what they counted in one period.
type BudgetReport struct {
	// Period is the current period ("2026-12-05" for a daily budget,
	// "2026-12" for a monthly one).
	Period   string `json:"period"`
	Currency string `json:"currency"`
	// Limits per tenant, per user and per agent plugin.
	Limits BudgetLimits `json:"limits"`
	// Tenant is what the whole tenant used; Users and Plugins what each
	// user and each agent plugin did, by name.
	Tenant  Usage            `json:"tenant"`
	Users   map[string]Usage `json:"users"`
	Plugins map[string]Usage `json:"plugins"`
}

// BudgetLimits are the limits of a budget, in a hierarchy: the tenant's
// use includes every user's, and a user's every plugin they asked for.
type BudgetLimits struct {
	Tenant Usage `json:"tenant"`
	User   Usage `json:"user"`
	Plugin Usage `json:"plugin"`
}
