package ledger

import (
	"fmt"
	"strings"
)

// A gate inspects the step at the run's cursor and either lets it through
// (ok) or names the reason and detail for halting the run. Gates are pure:
// they see only the persisted run and the declaration.
type gate func(run Run, step Step, d Declaration) (reason Reason, detail string, ok bool)

// gates run in order; the first to refuse decides the halt.
var gates = []gate{capabilityGate, ceilingGate}

// decide derives the answer to NextStep from the persisted run alone. When
// the answer ends the run it also returns the run state to persist.
func decide(run Run, d Declaration) (Next, *Run) {
	if run.Status != StatusRunning {
		return ended(run), nil
	}
	if run.Cursor >= len(run.Plan.Steps) {
		done := run
		done.Status = StatusSucceeded
		return ended(done), &done
	}
	step := run.Plan.Steps[run.Cursor]
	for _, g := range gates {
		if reason, detail, ok := g(run, step, d); !ok {
			halted := halt(run, reason, detail)
			return ended(halted), &halted
		}
	}
	return Next{Index: run.Cursor, Step: step, Status: StatusRunning}, nil
}

func ended(run Run) Next {
	return Next{Done: true, Index: run.Cursor, Status: run.Status, Reason: run.Reason, Detail: run.Detail}
}

func halt(run Run, reason Reason, detail string) Run {
	run.Status = StatusHalted
	run.Reason = reason
	run.Detail = detail
	return run
}

// capabilityGate refuses a step needing a capability the agent did not declare.
func capabilityGate(run Run, step Step, d Declaration) (Reason, string, bool) {
	missing := d.missing(step.Capabilities)
	if len(missing) == 0 {
		return "", "", true
	}
	quoted := make([]string, len(missing))
	for i, c := range missing {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	noun := "capability"
	if len(missing) > 1 {
		noun = "capabilities"
	}
	detail := fmt.Sprintf("step %d %q needs %s %s, which agent %q did not declare",
		run.Cursor, step.Name, noun, strings.Join(quoted, ", "), run.Agent)
	return ReasonCapabilityDenied, detail, false
}

// ceilingGate hands a step out only while money is left and the step's
// estimate fits in what is left. It runs before the step is performed, so no
// step starts once the budget is used up.
func ceilingGate(run Run, step Step, _ Declaration) (Reason, string, bool) {
	ceiling, spent := run.Ceiling.AmountMinor, run.SpentMinor
	if spent >= ceiling {
		return ReasonCostCeilingReached, fmt.Sprintf("spent %d of a %d %s ceiling (minor units) before step %d %q",
			spent, ceiling, run.Ceiling.Currency, run.Cursor, step.Name), false
	}
	if step.EstimateMinor > ceiling-spent {
		return ReasonCostCeilingReached, fmt.Sprintf("step %d %q estimates %d but only %d of the %d %s ceiling (minor units) is left",
			run.Cursor, step.Name, step.EstimateMinor, ceiling-spent, ceiling, run.Ceiling.Currency), false
	}
	return "", "", true
}
