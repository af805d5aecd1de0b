package budget

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sms-baseline/sms/contracts"
)

// Periods a budget may count over.
const (
	PeriodDay   = "day"
	PeriodMonth = "month"
)

// Bounds on a Config's figures, so that no sum or product of them can
// overflow an int64.
const (
	// MaxPrice is the highest price per million tokens, in minor units.
	MaxPrice = 1 << 28
	// MaxLimit is the highest limit of any figure.
	MaxLimit = 1 << 50
	// MaxSteps is the most steps one run may plan.
	MaxSteps = 1000
)

// Config is a tenant's budget. The zero Config counts everything and
// limits nothing.
type Config struct {
	// Period is PeriodDay (the default) or PeriodMonth, in UTC.
	Period string `json:"period,omitempty"`
	// Currency is the ISO 4217 code of costs; default USD.
	Currency string `json:"currency,omitempty"`
	// Prices turn tokens into cost.
	Prices Prices `json:"prices,omitempty"`
	// StepEstimateMinor is what one step of agent work (a model call, a
	// tool call) may cost at most: the ledger hands a step out only while
	// this much money is left, less what other steps running hold. 0: a
	// step is handed out while any is left (each holds one minor unit).
	StepEstimateMinor int64 `json:"stepEstimateMinor,omitempty"`
	// Limits per tenant, per user and per agent plugin; 0 is no limit.
	Limits contracts.BudgetLimits `json:"limits,omitempty"`
}

// Prices are the model's prices, in minor units per million tokens.
type Prices struct {
	InputPerMTokMinor  int64 `json:"inputPerMTokMinor,omitempty"`
	OutputPerMTokMinor int64 `json:"outputPerMTokMinor,omitempty"`
}

// ParseConfig decodes a Config from JSON, refusing unknown fields, and
// validates it.
func ParseConfig(raw []byte) (Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("budget: %w", err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate reports the first figure that is out of range, by its name.
func (c Config) Validate() error {
	if c.Period != "" && c.Period != PeriodDay && c.Period != PeriodMonth {
		return fmt.Errorf("budget: period must be %q or %q, not %q", PeriodDay, PeriodMonth, c.Period)
	}
	if c.Currency != "" && !isCurrency(c.Currency) {
		return fmt.Errorf("budget: currency must be a three-letter ISO 4217 code, not %q", c.Currency)
	}
	figures := []struct {
		name     string
		v, limit int64
	}{
		{"prices.inputPerMTokMinor", c.Prices.InputPerMTokMinor, MaxPrice},
		{"prices.outputPerMTokMinor", c.Prices.OutputPerMTokMinor, MaxPrice},
		{"stepEstimateMinor", c.StepEstimateMinor, MaxLimit},
	}
	for _, scope := range []struct {
		name string
		u    contracts.Usage
	}{{"tenant", c.Limits.Tenant}, {"user", c.Limits.User}, {"plugin", c.Limits.Plugin}} {
		for _, d := range dimensions {
			figures = append(figures, struct {
				name     string
				v, limit int64
			}{"limits." + scope.name + "." + d.field, d.of(scope.u), MaxLimit})
		}
	}
	for _, f := range figures {
		if f.v < 0 || f.v > f.limit {
			return fmt.Errorf("budget: %s must be between 0 and %d, not %d", f.name, f.limit, f.v)
		}
	}
	if c.Limits.Plugin.Tokens != 0 || c.Limits.Plugin.CostMinor != 0 {
		return fmt.Errorf("budget: limits.plugin takes wallMillis and rows only: agent plugins never call the model, chat turns do (limit them per user or tenant)")
	}
	return nil
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// currency returns the Config's currency or the default.
func (c Config) currency() string {
	if c.Currency == "" {
		return "USD"
	}
	return c.Currency
}

// periodOf names the period t falls in.
func (c Config) periodOf(t time.Time) string {
	if c.Period == PeriodMonth {
		return t.UTC().Format("2006-01")
	}
	return t.UTC().Format("2006-01-02")
}

// endOf is when the period t falls in ends.
func (c Config) endOf(t time.Time) time.Time {
	t = t.UTC()
	if c.Period == PeriodMonth {
		return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
}

// cost is what tokens cost, rounded up to a whole minor unit.
func (c Config) cost(t contracts.TokenUsage) int64 {
	in, out := clampTokens(t.InputTokens), clampTokens(t.OutputTokens)
	return (in*c.Prices.InputPerMTokMinor + out*c.Prices.OutputPerMTokMinor + 999_999) / 1_000_000
}

// clampTokens keeps a reported count in [0, 2^32], where a product with
// any price stays far below the int64 range.
func clampTokens(n int64) int64 { return min(max(n, 0), 1<<32) }

// dimension is one figure a budget counts.
type dimension struct {
	field, words string
	of           func(contracts.Usage) int64
}

var dimensions = []dimension{
	{"tokens", "model tokens", func(u contracts.Usage) int64 { return u.Tokens }},
	{"costMinor", "minor units of model cost", func(u contracts.Usage) int64 { return u.CostMinor }},
	{"wallMillis", "ms of wall time in agent code", func(u contracts.Usage) int64 { return u.WallMillis }},
	{"rows", "rows written", func(u contracts.Usage) int64 { return u.Rows }},
}

// add returns a+b, each figure saturating at MaxLimit.
func add(a, b contracts.Usage) contracts.Usage {
	s := func(x, y int64) int64 { return min(x+min(max(y, 0), MaxLimit), MaxLimit) }
	return contracts.Usage{Tokens: s(a.Tokens, b.Tokens), CostMinor: s(a.CostMinor, b.CostMinor),
		WallMillis: s(a.WallMillis, b.WallMillis), Rows: s(a.Rows, b.Rows)}
}

// modelDimensions are what a chat turn spends itself; the plugin code it
// runs is refused by the kernel past the others.
var modelDimensions = dimensions[:2]

// over returns the first of dims in which used reached a non-zero limit.
func over(used, limit contracts.Usage, dims []dimension) (dimension, bool) {
	for _, d := range dims {
		if l := d.of(limit); l > 0 && d.of(used) >= l {
			return d, true
		}
	}
	return dimension{}, false
}
