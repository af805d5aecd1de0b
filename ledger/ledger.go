package ledger

import (
	"context"
	"errors"
	"fmt"
)

// maxHaltAttempts bounds how often NextStep rereads a run that another
// caller changed while this one was halting it.
const maxHaltAttempts = 3

// Ledger hands out the steps of claimed runs and records their outcomes. It
// keeps no state of its own between calls, so any number of Ledger values
// over the same Store may be used concurrently, and one may be discarded and
// replaced at any point.
type Ledger struct {
	store Store
}

// New returns a ledger over store.
func New(store Store) *Ledger {
	return &Ledger{store: store}
}

// ClaimRun creates the run for c's (agent, tenant, period) key, or returns
// the run that already exists for it with Acquired false. Losing the race is
// expected whenever two schedulers fire for the same period, and is not an error.
func (l *Ledger) ClaimRun(ctx context.Context, c Claim) (ClaimResult, error) {
	if err := c.Validate(); err != nil {
		return ClaimResult{}, fmt.Errorf("claim run: %w", err)
	}
	run := Run{
		RunID: c.RunID, Agent: c.Agent, TenantKey: c.TenantKey, Period: c.Period,
		Plan: c.Plan, Ceiling: c.Ceiling, Status: StatusRunning,
	}
	stored, inserted, err := l.store.InsertRun(ctx, run)
	if err != nil {
		return ClaimResult{}, fmt.Errorf("claim run %q: %w", c.RunID, err)
	}
	return ClaimResult{Acquired: inserted, Run: stored}, nil
}

// NextStep returns the step at the run's persisted cursor, or Done with the
// run's ending. Before handing a step out it checks the agent's declared
// capabilities and the cost ceiling; a failed check halts the run, persists
// the reason, and returns Done. Calling it again without recording an outcome
// returns the same step.
func (l *Ledger) NextStep(ctx context.Context, runID string, d Declaration) (Next, error) {
	for attempt := 1; ; attempt++ {
		run, err := l.store.LoadRun(ctx, runID)
		if err != nil {
			return Next{}, fmt.Errorf("next step of run %q: %w", runID, err)
		}
		next, ending := decide(run, d)
		if ending == nil {
			return next, nil
		}
		err = l.store.UpdateRun(ctx, Update{Run: *ending})
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, ErrConflict) || attempt == maxHaltAttempts {
			return Next{}, fmt.Errorf("next step of run %q: end run: %w", runID, err)
		}
	}
}

// RecordStep records the outcome of the step at index, which must be the
// run's cursor. A failed outcome must carry a failure reason and halts the run
// with ReasonStepFailed; recording the last step succeeds the run. The spend is
// recorded as reported even if it crosses the ceiling: the money is gone, and
// the next NextStep halts the run. It returns the updated run.
func (l *Ledger) RecordStep(ctx context.Context, runID string, index int, o Outcome) (Run, error) {
	run, err := l.recordStep(ctx, runID, index, o)
	if err != nil {
		return Run{}, fmt.Errorf("record step %d of run %q: %w", index, runID, err)
	}
	return run, nil
}

func (l *Ledger) recordStep(ctx context.Context, runID string, index int, o Outcome) (Run, error) {
	if err := o.validate(); err != nil {
		return Run{}, err
	}
	run, err := l.store.LoadRun(ctx, runID)
	if err != nil {
		return Run{}, err
	}
	if err := checkRecordable(run, index, o); err != nil {
		return Run{}, err
	}
	spent, err := addMinor(run.SpentMinor, o.SpentMinor)
	if err != nil {
		return Run{}, err
	}
	next := advance(run, o, spent)
	rec := StepRecord{Index: index, OK: o.OK, FailureReason: o.FailureReason, SpentMinor: o.SpentMinor}
	if err := l.store.UpdateRun(ctx, Update{Run: next, Step: &rec}); err != nil {
		return Run{}, err
	}
	next.Version++
	return next, nil
}

func checkRecordable(run Run, index int, o Outcome) error {
	if run.Status != StatusRunning {
		return fmt.Errorf("%w: it %s", ErrRunFinished, run.Status)
	}
	if index != run.Cursor || index >= len(run.Plan.Steps) {
		return fmt.Errorf("%w: got step %d, want step %d of %d", ErrStepOutOfOrder, index, run.Cursor, len(run.Plan.Steps))
	}
	if o.Currency != "" && o.Currency != run.Ceiling.Currency {
		return fmt.Errorf("%w: outcome is in %s, run is in %s", ErrCurrencyMismatch, o.Currency, run.Ceiling.Currency)
	}
	return nil
}

// advance returns the run after the step at its cursor ended with o.
func advance(run Run, o Outcome, spent int64) Run {
	step := run.Plan.Steps[run.Cursor]
	run.SpentMinor = spent
	run.Cursor++
	switch {
	case !o.OK:
		return halt(run, ReasonStepFailed, fmt.Sprintf("step %d %q failed: %s", run.Cursor-1, step.Name, o.FailureReason))
	case run.Cursor == len(run.Plan.Steps):
		run.Status = StatusSucceeded
	}
	return run
}

// Run returns the persisted state of a run.
func (l *Ledger) Run(ctx context.Context, runID string) (Run, error) {
	run, err := l.store.LoadRun(ctx, runID)
	if err != nil {
		return Run{}, fmt.Errorf("load run %q: %w", runID, err)
	}
	return run, nil
}

// Steps returns the outcomes recorded for a run, in step order.
func (l *Ledger) Steps(ctx context.Context, runID string) ([]StepRecord, error) {
	if _, err := l.store.LoadRun(ctx, runID); err != nil {
		return nil, fmt.Errorf("load steps of run %q: %w", runID, err)
	}
	steps, err := l.store.LoadSteps(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("load steps of run %q: %w", runID, err)
	}
	return steps, nil
}

// Finish ends a running run as succeeded at its cursor: the host's work
// ended before the plan's last step, as an agent turn does when the model
// answers before using every step its plan allows. The plan and the steps
// recorded stay as they are, and the unused steps are never handed out. A
// run that already ended is left as it is and yields ErrRunFinished. It
// returns the updated run.
func (l *Ledger) Finish(ctx context.Context, runID string) (Run, error) {
	run, err := l.end(ctx, runID, func(r Run) Run { r.Status = StatusSucceeded; return r })
	if err != nil {
		return Run{}, fmt.Errorf("finish run %q: %w", runID, err)
	}
	return run, nil
}

// Halt ends a running run with reason and detail, both required: the host
// stopped the work under a limit the ledger does not hold itself, such as
// ReasonLimitReached. A run that already ended is left as it is and yields
// ErrRunFinished. It returns the updated run.
func (l *Ledger) Halt(ctx context.Context, runID string, reason Reason, detail string) (Run, error) {
	if err := checkText("reason", string(reason)); err != nil {
		return Run{}, fmt.Errorf("halt run %q: %w: %w", runID, ErrInvalidEnding, err)
	}
	if err := checkText("detail", detail); err != nil {
		return Run{}, fmt.Errorf("halt run %q: %w: %w", runID, ErrInvalidEnding, err)
	}
	run, err := l.end(ctx, runID, func(r Run) Run { return halt(r, reason, detail) })
	if err != nil {
		return Run{}, fmt.Errorf("halt run %q: %w", runID, err)
	}
	return run, nil
}

// end writes ending(run) over a running run, rereading it when another
// caller changed it first.
func (l *Ledger) end(ctx context.Context, runID string, ending func(Run) Run) (Run, error) {
	for attempt := 1; ; attempt++ {
		run, err := l.store.LoadRun(ctx, runID)
		if err != nil {
			return Run{}, err
		}
		if run.Status != StatusRunning {
			return Run{}, fmt.Errorf("%w: it %s", ErrRunFinished, run.Status)
		}
		done := ending(run)
		err = l.store.UpdateRun(ctx, Update{Run: done})
		if err == nil {
			done.Version++
			return done, nil
		}
		if !errors.Is(err, ErrConflict) || attempt == maxHaltAttempts {
			return Run{}, err
		}
	}
}
