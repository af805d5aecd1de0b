package agentloop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/sms-baseline/sms/contracts"
)

// toolsPerCall is how many tool calls a turn's run plans for each model
// call; a turn's plan is MaxSteps model calls and as many tool calls.
const toolsPerCall = 8

// maxPlan is the most steps a turn's run plans (the budget's own bound).
const maxPlan = 1000

// budgetRun accounts one turn through the tenant's budgets (BudgetKey),
// when the kernel has them; without them every method does nothing.
type budgetRun struct {
	run    contracts.BudgetRun
	halted *contracts.BudgetHalt
	ended  bool // finish ran
}

// begin claims the turn's run. A user or tenant already over budget gets
// a halted run: the turn makes no call.
func (s *service) begin(ctx context.Context, user string) (*budgetRun, error) {
	v, err := s.k.GetValue(contracts.BudgetKey)
	if err != nil {
		return &budgetRun{}, nil //nolint:nilerr // a kernel without budgets counts nothing
	}
	b, ok := v.(contracts.Budgets)
	if !ok {
		return nil, fmt.Errorf("agentloop: key %q holds %T, not contracts.Budgets", contracts.BudgetKey, v)
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	steps := min(s.opts.MaxSteps*(1+toolsPerCall), maxPlan)
	run, err := b.Begin(ctx, contracts.Work{ID: "turn-" + hex.EncodeToString(id[:]), Agent: PluginID, User: user, Steps: steps, Model: true})
	return haltOr(run, err)
}

// haltOr makes a budget halt a halted run, and returns other errors.
func haltOr(run contracts.BudgetRun, err error) (*budgetRun, error) {
	var h *contracts.BudgetHalt
	if errors.As(err, &h) {
		return &budgetRun{halted: h}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agentloop: %w", err)
	}
	return &budgetRun{run: run}, nil
}

// next asks for the next step and reports whether it may run; after a
// halt it never may again.
func (r *budgetRun) next(ctx context.Context) (bool, error) {
	if r.halted != nil {
		return false, nil
	}
	if r.run == nil {
		return true, nil
	}
	err := r.run.Next(ctx)
	var h *contracts.BudgetHalt
	if errors.As(err, &h) {
		r.halted = h
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("agentloop: %w", err)
	}
	return true, nil
}

// record reports the step next handed out.
func (r *budgetRun) record(ctx context.Context, s contracts.StepUse) error {
	if r.run == nil {
		return nil
	}
	if err := r.run.Record(ctx, s); err != nil {
		return fmt.Errorf("agentloop: %w", err)
	}
	return nil
}

// finish ends a run its turn did not use up; a second call does nothing.
func (r *budgetRun) finish(ctx context.Context) error {
	if r.run == nil || r.halted != nil || r.ended {
		return nil
	}
	r.ended = true
	if err := r.run.Finish(ctx); err != nil {
		return fmt.Errorf("agentloop: %w", err)
	}
	return nil
}

// notRun is the tool result of a call the turn's run stopped.
func notRun(h *contracts.BudgetHalt) string {
	return "not run: the turn stopped: " + h.Detail
}

// usageOf is what a model call used: what its driver reported, or an
// estimate when it reported nothing.
func usageOf(req contracts.ModelRequest, resp contracts.ModelResponse) contracts.TokenUsage {
	if resp.Usage != nil {
		return *resp.Usage
	}
	return contracts.TokenEstimate(req, resp)
}
