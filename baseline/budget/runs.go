package budget

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/ledger"
)

// unlimitedCeiling is a run's ceiling when neither its user nor the tenant
// has a cost limit: more than any limit can be.
const unlimitedCeiling = 2 * MaxLimit

// MaxMemoryRuns is how many runs an in-memory run store keeps before the
// budget starts a new one.
const MaxMemoryRuns = 4096

// budgets is the value of contracts.BudgetKey.
type budgets struct {
	m      *Meter
	tenant string // the ledger's tenant key: the kernel's name
	k      *kernel.Kernel

	mu     sync.Mutex
	memory *ledger.MemoryStore // the runs, replaced every MaxMemoryRuns claims
	claims int
}

// ledger returns the ledger to claim the next run in.
func (b *budgets) ledger() *ledger.Ledger {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.memory == nil || b.claims >= MaxMemoryRuns {
		b.memory, b.claims = ledger.NewMemoryStore(), 0
	}
	b.claims++
	return ledger.New(b.memory)
}

var _ contracts.Budgets = (*budgets)(nil)

// checkWork returns a *contracts.BudgetHalt when w's user or the tenant
// reached a limit that stops w.
func (b *budgets) checkWork(ctx context.Context, w contracts.Work) error {
	dims := dimensions
	if w.Model {
		dims = modelDimensions
	}
	c := chainOf("", w.User)
	return b.m.check(ctx, &c, "", dims)
}

// Report returns the limits and the period's use.
func (b *budgets) Report(context.Context) (contracts.BudgetReport, error) { return b.m.Report(), nil }

// Begin claims the work's run under a ceiling of the money its user and
// the tenant have left.
func (b *budgets) Begin(ctx context.Context, w contracts.Work) (contracts.BudgetRun, error) {
	if w.Steps < 1 || w.Steps > MaxSteps {
		return nil, fmt.Errorf("budget: work %s plans %d steps; a run plans 1 to %d", w.ID, w.Steps, MaxSteps)
	}
	if err := b.checkWork(ctx, w); err != nil {
		return nil, b.halted(ctx, w, err)
	}
	ceiling, period := b.m.moneyLeft(w.User)
	if ceiling <= 0 {
		return nil, b.halted(ctx, w, &contracts.BudgetHalt{Reason: string(ledger.ReasonCostCeilingReached),
			Detail: fmt.Sprintf("no money is left in the %s budget of period %s", b.m.cfg.currency(), period)})
	}
	steps := make([]ledger.Step, w.Steps)
	for i := range steps {
		steps[i] = ledger.Step{Name: fmt.Sprintf("step %d", i+1), EstimateMinor: b.m.cfg.StepEstimateMinor}
	}
	runID := w.Agent + "/" + w.ID
	l := b.ledger()
	res, err := l.ClaimRun(ctx, ledger.Claim{RunID: runID, Agent: w.Agent, TenantKey: b.tenant, Period: w.ID,
		Plan: ledger.Plan{Steps: steps}, Ceiling: ledger.Money{AmountMinor: ceiling, Currency: b.m.cfg.currency()}})
	if err != nil {
		return nil, fmt.Errorf("budget: %w", err)
	}
	if !res.Acquired {
		return nil, fmt.Errorf("budget: work %s of %s already has a run", w.ID, w.Agent)
	}
	return &run{b: b, l: l, w: w, id: runID}, nil
}

// halted records EventHalted for err when it is a budget halt, and
// returns err. Work refused again for the same reason in the same period
// is not recorded again: a caller over budget cannot grow the log.
func (b *budgets) halted(ctx context.Context, w contracts.Work, err error) error {
	var h *contracts.BudgetHalt
	if errors.As(err, &h) && b.m.firstHalt(w.Agent, w.User, h.Reason) {
		_ = b.k.Record(context.WithoutCancel(ctx), EventHalted, PluginID, map[string]string{
			"agent": w.Agent, "work": w.ID, "user": w.User, "reason": h.Reason, "detail": h.Detail})
	}
	return err
}

// run is a claimed run of the ledger.
type run struct {
	b     *budgets
	l     *ledger.Ledger
	w     contracts.Work
	id    string
	index int   // the step Next handed out
	held  int64 // the estimate Next held for it, until Record or Finish
}

// Next hands out the next step, unless a limit the ledger does not hold
// (tokens, wall time, rows), the money other runs' steps hold, or the
// ledger's ceiling stops the work.
func (r *run) Next(ctx context.Context) error {
	r.letGo()
	est := holdOf(r.b.m.cfg.StepEstimateMinor)
	err := r.b.checkWork(ctx, r.w)
	reason := ledger.ReasonLimitReached
	if err == nil {
		err, reason = r.b.m.hold(r.w.User, est), ledger.ReasonCostCeilingReached
	}
	if err != nil {
		var h *contracts.BudgetHalt
		if errors.As(err, &h) {
			_, herr := r.l.Halt(ctx, r.id, reason, h.Detail)
			if herr != nil && !errors.Is(herr, ledger.ErrRunFinished) { // a run that ended halts all the same
				return fmt.Errorf("budget: %w", herr)
			}
		}
		return r.b.halted(ctx, r.w, err)
	}
	r.held = est
	next, err := r.l.NextStep(ctx, r.id, ledger.Declaration{})
	if err != nil {
		r.letGo()
		return fmt.Errorf("budget: %w", err)
	}
	if next.Done {
		r.letGo()
		h := &contracts.BudgetHalt{Reason: string(next.Reason), Detail: next.Detail}
		if next.Status == ledger.StatusSucceeded {
			h = &contracts.BudgetHalt{Reason: "steps_used", Detail: fmt.Sprintf("the work used all %d steps its run allows", r.w.Steps)}
		}
		return r.b.halted(ctx, r.w, h)
	}
	r.index = next.Index
	return nil
}

// Record records the step Next handed out with its cost, and counts its
// tokens and cost against the user and the tenant.
func (r *run) Record(ctx context.Context, s contracts.StepUse) error {
	cost := r.b.m.cfg.cost(s.Tokens)
	o := ledger.Outcome{OK: s.Failed == "", SpentMinor: cost, Currency: r.b.m.cfg.currency()}
	if !o.OK {
		o.FailureReason = failure(s)
	}
	tokens := clampTokens(s.Tokens.InputTokens) + clampTokens(s.Tokens.OutputTokens)
	r.b.m.settle(r.w.User, r.held, contracts.Usage{Tokens: tokens, CostMinor: cost})
	r.held = 0
	if _, err := r.l.RecordStep(ctx, r.id, r.index, o); err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	return nil
}

// letGo lets go of the money held for a step that will not be recorded.
func (r *run) letGo() {
	if r.held > 0 {
		r.b.m.settle(r.w.User, r.held, contracts.Usage{})
		r.held = 0
	}
}

// Finish ends the run when the work ended before its last step.
func (r *run) Finish(ctx context.Context) error {
	r.letGo()
	if _, err := r.l.Finish(ctx, r.id); err != nil && !errors.Is(err, ledger.ErrRunFinished) {
		return fmt.Errorf("budget: %w", err)
	}
	return nil
}

// failure is a step's failure as the ledger keeps it: valid UTF-8 without
// NUL bytes, never blank, at most 1 KiB.
func failure(s contracts.StepUse) string {
	f := strings.ReplaceAll(strings.ToValidUTF8(s.Failed, "?"), "\x00", "?")
	if strings.TrimSpace(f) == "" {
		f = s.Kind + " " + s.Name + " failed"
	}
	if len(f) > 1024 {
		f = strings.ToValidUTF8(f[:1024], "")
	}
	return f
}
