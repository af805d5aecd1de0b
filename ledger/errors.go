package ledger

import "errors"

// Sentinel errors. Callers branch on them with errors.Is; the returned errors
// wrap them with the run, step or field concerned.
var (
	// ErrInvalidClaim reports a claim with a missing or unstorable field.
	ErrInvalidClaim = errors.New("invalid claim")
	// ErrInvalidAmount reports a negative, fractional, missing or
	// out-of-range amount of money.
	ErrInvalidAmount = errors.New("invalid amount")
	// ErrInvalidCurrency reports a currency that is not a three-letter
	// ISO 4217 code.
	ErrInvalidCurrency = errors.New("invalid currency")
	// ErrCurrencyMismatch reports money in a currency other than the run's.
	ErrCurrencyMismatch = errors.New("currency mismatch")
	// ErrInvalidOutcome reports an outcome that contradicts itself, such as a
	// successful step carrying a failure reason.
	ErrInvalidOutcome = errors.New("invalid outcome")
	// ErrMissingFailureReason reports a failed step recorded without a
	// failure reason.
	ErrMissingFailureReason = errors.New("failed step has no failure reason")
	// ErrNotFound reports an unknown run, or one the current tenant may not see.
	ErrNotFound = errors.New("run not found")
	// ErrRunIDTaken reports a claim whose run ID already belongs to a run
	// with a different (agent, tenant, period) key.
	ErrRunIDTaken = errors.New("run id already taken")
	// ErrConflict reports that the run changed between reading and writing
	// it, or that the step was already recorded. Reload the run and decide again.
	ErrConflict = errors.New("run changed concurrently")
	// ErrStepOutOfOrder reports an outcome for a step other than the one the
	// run's cursor points at.
	ErrStepOutOfOrder = errors.New("step is not the run's current step")
	// ErrRunFinished reports an outcome recorded for a run that has already
	// succeeded or halted.
	ErrRunFinished = errors.New("run has finished")
	// ErrPlanImmutable reports an attempt to change a run's plan, or the
	// agent, tenant, period or ceiling it was claimed under.
	ErrPlanImmutable = errors.New("plan and claim terms are immutable after claim")
	// ErrInvalidEnding reports a halted run without both a reason and a
	// detail, or a reason stored on a run that did not halt.
	ErrInvalidEnding = errors.New("run ending needs a reason and a detail exactly when it halts")
	// ErrInvalidRun reports any other stored state a store refuses, such as a
	// negative spend or an unknown status.
	ErrInvalidRun = errors.New("invalid run state")
)
