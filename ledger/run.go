package ledger

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Status is where a run stands.
type Status string

// Run statuses. Succeeded and halted are final.
const (
	// StatusRunning means steps remain to be handed out.
	StatusRunning Status = "running"
	// StatusSucceeded means every step was recorded as successful.
	StatusSucceeded Status = "succeeded"
	// StatusHalted means the run stopped early; Reason and Detail say why.
	StatusHalted Status = "halted"
)

// Reason says why a run halted. It is a stable code for branching; the run's
// Detail is the sentence to show a person.
type Reason string

// Halt reasons.
const (
	// ReasonCostCeilingReached: the spend reached the ceiling, or the next
	// step's estimate would cross it.
	ReasonCostCeilingReached Reason = "cost_ceiling_reached"
	// ReasonCapabilityDenied: the next step needs a capability the agent did
	// not declare. The detail names it.
	ReasonCapabilityDenied Reason = "capability_denied"
	// ReasonStepFailed: the host recorded a failed step. The detail carries
	// its failure reason.
	ReasonStepFailed Reason = "step_failed"
	// ReasonLimitReached: the host halted the run (Ledger.Halt) under a
	// limit the ledger does not hold, such as model tokens; the detail
	// names it.
	ReasonLimitReached Reason = "limit_reached"
)

// Run is the persisted state of one claimed run.
type Run struct {
	// RunID, Agent, TenantKey, Period, Plan and Ceiling are the claim's
	// terms, fixed from the claim on.
	RunID     string `json:"runId"`
	Agent     string `json:"agent"`
	TenantKey string `json:"tenantKey"`
	Period    string `json:"period"`
	Plan      Plan   `json:"plan"`
	Ceiling   Money  `json:"ceiling"`
	// SpentMinor is the total recorded spend in minor units of Ceiling.Currency.
	SpentMinor int64 `json:"spentMinor"`
	// Cursor is the index of the next step to hand out; it only moves forward.
	Cursor int `json:"cursor"`
	// Status says whether the run is still handing out steps.
	Status Status `json:"status"`
	// Reason and Detail are set exactly when Status is StatusHalted.
	Reason Reason `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Version counts the writes to the run, for optimistic concurrency.
	Version int64 `json:"version"`
}

// StepRecord is what the host reported for one step.
type StepRecord struct {
	// Index is the step's position in the plan.
	Index int `json:"index"`
	// OK, FailureReason and SpentMinor are the host's Outcome.
	OK            bool   `json:"ok"`
	FailureReason string `json:"failureReason,omitempty"`
	SpentMinor    int64  `json:"spentMinor"`
}

// Outcome is the host's report on a step it performed.
type Outcome struct {
	// OK is true when the step succeeded.
	OK bool `json:"ok"`
	// FailureReason is required when OK is false and refused when it is true.
	FailureReason string `json:"failureReason,omitempty"`
	// SpentMinor is what the step cost, in minor units of the run's currency.
	SpentMinor int64 `json:"spentMinor"`
	// Currency is optional; when set it must equal the run's currency.
	Currency string `json:"currency,omitempty"`
}

// UnmarshalJSON decodes an outcome, accepting spentMinor only as a
// non-negative JSON integer and refusing unknown fields.
func (o *Outcome) UnmarshalJSON(data []byte) error {
	var raw struct {
		OK            bool            `json:"ok"`
		FailureReason string          `json:"failureReason"`
		SpentMinor    json.RawMessage `json:"spentMinor"`
		Currency      string          `json:"currency"`
	}
	if err := decodeStrict(data, &raw); err != nil {
		return fmt.Errorf("outcome: %w", err)
	}
	v := Outcome{OK: raw.OK, FailureReason: raw.FailureReason, Currency: raw.Currency}
	if len(raw.SpentMinor) > 0 {
		n, err := parseMinor("spentMinor", raw.SpentMinor)
		if err != nil {
			return err
		}
		v.SpentMinor = n
	}
	*o = v
	return nil
}

// validate checks the outcome on its own; RecordStep checks it against the run.
func (o Outcome) validate() error {
	if o.SpentMinor < 0 {
		return fmt.Errorf("%w: spentMinor must not be negative, got %d", ErrInvalidAmount, o.SpentMinor)
	}
	if o.Currency != "" {
		if err := checkCurrency(o.Currency); err != nil {
			return err
		}
	}
	if o.OK {
		if o.FailureReason != "" {
			return fmt.Errorf("%w: a successful step carries failure reason %q", ErrInvalidOutcome, o.FailureReason)
		}
		return nil
	}
	if strings.TrimSpace(o.FailureReason) == "" {
		return ErrMissingFailureReason
	}
	if err := checkText("failureReason", o.FailureReason); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOutcome, err)
	}
	return nil
}

// ClaimResult is the answer to a claim.
type ClaimResult struct {
	// Acquired is true for the one claim that created the run.
	Acquired bool
	// Run is the run for the claim's key: the new one, or the existing one
	// when another claim got there first.
	Run Run
}

// Next is the answer to NextStep: a step to perform, or the end of the run.
type Next struct {
	// Done is true when no step is handed out; Status says how the run ended.
	Done bool
	// Index and Step are the step to perform when Done is false.
	Index int
	Step  Step
	// Status is StatusRunning while steps are handed out.
	Status Status
	// Reason and Detail explain a halt.
	Reason Reason
	Detail string
}

// CheckRun enforces on r the constraints the Postgres schema declares, so that
// every store refuses the same states. Stores call it before writing.
func CheckRun(r Run) error {
	for _, f := range []struct{ name, value string }{
		{"runId", r.RunID}, {"agent", r.Agent}, {"tenantKey", r.TenantKey}, {"period", r.Period},
	} {
		if f.value == "" {
			return fmt.Errorf("%w: %s is empty", ErrInvalidRun, f.name)
		}
	}
	switch {
	case r.Ceiling.AmountMinor <= 0 || checkCurrency(r.Ceiling.Currency) != nil:
		return fmt.Errorf("%w: ceiling %d %q", ErrInvalidRun, r.Ceiling.AmountMinor, r.Ceiling.Currency)
	case r.SpentMinor < 0 || r.Cursor < 0:
		return fmt.Errorf("%w: spent %d, cursor %d", ErrInvalidRun, r.SpentMinor, r.Cursor)
	}
	return checkEnding(r)
}

func checkEnding(r Run) error {
	switch r.Status {
	case StatusHalted:
		if strings.TrimSpace(string(r.Reason)) == "" || strings.TrimSpace(r.Detail) == "" {
			return fmt.Errorf("%w: halted run %q has reason %q and detail %q", ErrInvalidEnding, r.RunID, r.Reason, r.Detail)
		}
	case StatusRunning, StatusSucceeded:
		if r.Reason != "" || r.Detail != "" {
			return fmt.Errorf("%w: %s run %q carries reason %q", ErrInvalidEnding, r.Status, r.RunID, r.Reason)
		}
	default:
		return fmt.Errorf("%w: unknown status %q", ErrInvalidRun, r.Status)
	}
	return nil
}

// CheckStepRecord enforces on s the constraints the Postgres schema declares
// for recorded steps.
func CheckStepRecord(s StepRecord) error {
	if !s.OK && strings.TrimSpace(s.FailureReason) == "" {
		return fmt.Errorf("step %d: %w", s.Index, ErrMissingFailureReason)
	}
	if s.Index < 0 || s.SpentMinor < 0 {
		return fmt.Errorf("%w: step %d spent %d", ErrInvalidRun, s.Index, s.SpentMinor)
	}
	return nil
}
