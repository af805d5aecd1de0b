package ledger

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Plan is the ordered list of steps a run will hand out. It is fixed when the
// run is claimed and never changes afterwards.
type Plan struct {
	// Steps are handed out in order, one at a time.
	Steps []Step `json:"steps"`
}

// Step is one unit of work the host performs. The ledger never interprets
// Input; it only checks capabilities and the cost estimate.
type Step struct {
	// Name identifies the step in details and logs.
	Name string `json:"name"`
	// Capabilities the agent must have declared for this step to be handed out.
	Capabilities []string `json:"capabilities,omitempty"`
	// EstimateMinor is what the step may cost, in minor units of the run's
	// currency. The step is handed out only if it fits under the ceiling.
	EstimateMinor int64 `json:"estimateMinor,omitempty"`
	// Input is opaque JSON for the host. Stores may normalise its
	// formatting (Postgres stores it as jsonb), never its meaning.
	Input json.RawMessage `json:"input,omitempty"`
}

// UnmarshalJSON decodes a plan with one strict decoder for all its steps,
// with the same rules as Step.UnmarshalJSON.
func (p *Plan) UnmarshalJSON(data []byte) error {
	var raw struct {
		Steps []stepJSON `json:"steps"`
	}
	if err := decodeStrict(data, &raw); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	steps := make([]Step, len(raw.Steps))
	for i, s := range raw.Steps {
		step, err := s.step()
		if err != nil {
			return err
		}
		steps[i] = step
	}
	*p = Plan{Steps: steps}
	return nil
}

// UnmarshalJSON decodes a step, accepting estimateMinor only as a
// non-negative JSON integer and refusing unknown fields.
func (s *Step) UnmarshalJSON(data []byte) error {
	var raw stepJSON
	if err := decodeStrict(data, &raw); err != nil {
		return fmt.Errorf("step: %w", err)
	}
	step, err := raw.step()
	if err != nil {
		return err
	}
	*s = step
	return nil
}

// stepJSON is a step as it arrives, before its estimate is checked.
type stepJSON struct {
	Name          string          `json:"name"`
	Capabilities  []string        `json:"capabilities"`
	EstimateMinor json.RawMessage `json:"estimateMinor"`
	Input         json.RawMessage `json:"input"`
}

func (raw stepJSON) step() (Step, error) {
	s := Step{Name: raw.Name, Capabilities: raw.Capabilities, Input: raw.Input}
	if len(raw.EstimateMinor) > 0 {
		n, err := parseMinor("estimateMinor", raw.EstimateMinor)
		if err != nil {
			return Step{}, fmt.Errorf("step %q: %w", raw.Name, err)
		}
		s.EstimateMinor = n
	}
	return s, nil
}

// Declaration lists the capabilities an agent declared. The ledger refuses
// steps beyond them; the host still checks its own permissions when it
// performs a step.
type Declaration struct {
	// Capabilities the agent may use, such as "invoice.read".
	Capabilities []string `json:"capabilities"`
}

// missing returns the capabilities in need that d does not declare, in order.
func (d Declaration) missing(need []string) []string {
	var out []string
	for _, c := range need {
		if !containsString(d.Capabilities, c) {
			out = append(out, c)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Claim asks for the one run of an agent for a tenant in a period.
type Claim struct {
	// RunID is chosen by the caller and identifies the run from then on.
	RunID string `json:"runId"`
	// Agent names the agent doing the work.
	Agent string `json:"agent"`
	// TenantKey is opaque: stored and compared, never parsed.
	TenantKey string `json:"tenantKey"`
	// Period names the slot the run belongs to, such as "2026-08".
	Period string `json:"period"`
	// Plan is the work, fixed from now on.
	Plan Plan `json:"plan"`
	// Ceiling is the most the run may spend; it must be positive.
	Ceiling Money `json:"ceiling"`
}

// Validate reports the first problem that would stop c from being claimed.
func (c Claim) Validate() error {
	fields := []struct{ name, value string }{
		{"runId", c.RunID}, {"agent", c.Agent}, {"tenantKey", c.TenantKey}, {"period", c.Period},
	}
	for _, f := range fields {
		if err := checkText(f.name, f.value); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidClaim, err)
		}
	}
	if err := c.Ceiling.Validate(); err != nil {
		return fmt.Errorf("ceiling: %w", err)
	}
	if c.Ceiling.AmountMinor == 0 {
		return fmt.Errorf("%w: ceiling must be positive, got 0", ErrInvalidAmount)
	}
	return c.Plan.validate()
}

func (p Plan) validate() error {
	if len(p.Steps) == 0 {
		return fmt.Errorf("%w: plan has no steps", ErrInvalidClaim)
	}
	for i, s := range p.Steps {
		if err := s.validate(); err != nil {
			return fmt.Errorf("%w: plan step %d: %w", ErrInvalidClaim, i, err)
		}
	}
	return nil
}

func (s Step) validate() error {
	if err := checkText("name", s.Name); err != nil {
		return err
	}
	for _, c := range s.Capabilities {
		if err := checkText("capability", c); err != nil {
			return err
		}
	}
	if s.EstimateMinor < 0 {
		return fmt.Errorf("%w: estimateMinor must not be negative, got %d", ErrInvalidAmount, s.EstimateMinor)
	}
	if len(s.Input) > 0 && !json.Valid(s.Input) {
		return fmt.Errorf("input of step %q is not valid JSON", s.Name)
	}
	return nil
}

// checkText requires a non-empty string every store can keep verbatim:
// valid UTF-8 without NUL bytes. It does not look inside the value.
func checkText(field, value string) error {
	switch {
	case value == "":
		return fmt.Errorf("%s is required", field)
	case !utf8.ValidString(value):
		return fmt.Errorf("%s is not valid UTF-8", field)
	case strings.ContainsRune(value, 0):
		return fmt.Errorf("%s contains a NUL byte", field)
	}
	return nil
}
