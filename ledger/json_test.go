package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/ledger"
	"github.com/sms-baseline/sms/ledger/storetest"
)

const claimJSON = `{
	"runId": "run-1", "agent": "collections", "tenantKey": "org_abc", "period": "2026-08",
	"plan": {"steps": [{"name": "read", "capabilities": ["invoice.read"], "estimateMinor": 2500, "input": {"invoice": "INV-7"}}]},
	"ceiling": %s
}`

func TestClaimJSON(t *testing.T) {
	tests := []struct {
		name    string
		ceiling string
		want    error  // nil for a valid claim
		wantMsg string // the error must say this
	}{
		{name: "integer minor units", ceiling: `{"amountMinor": 50000, "currency": "INR"}`},
		{name: "fractional amount", ceiling: `{"amountMinor": 500.5, "currency": "INR"}`, want: ledger.ErrInvalidAmount, wantMsg: "whole number of minor units, got 500.5"},
		{name: "integral float", ceiling: `{"amountMinor": 500.0, "currency": "INR"}`, want: ledger.ErrInvalidAmount, wantMsg: "got 500.0"},
		{name: "exponent", ceiling: `{"amountMinor": 5e4, "currency": "INR"}`, want: ledger.ErrInvalidAmount, wantMsg: "got 5e4"},
		{name: "negative amount", ceiling: `{"amountMinor": -100, "currency": "INR"}`, want: ledger.ErrInvalidAmount, wantMsg: "must not be negative, got -100"},
		{name: "quoted amount", ceiling: `{"amountMinor": "100", "currency": "INR"}`, want: ledger.ErrInvalidAmount, wantMsg: "must be a JSON integer"},
		{name: "null amount", ceiling: `{"amountMinor": null, "currency": "INR"}`, want: ledger.ErrInvalidAmount, wantMsg: "got null"},
		{name: "missing amount", ceiling: `{"currency": "INR"}`, want: ledger.ErrInvalidAmount, wantMsg: "amountMinor is required"},
		{name: "overflowing amount", ceiling: `{"amountMinor": 9223372036854775808, "currency": "INR"}`, want: ledger.ErrInvalidAmount, wantMsg: "out of range"},
		{name: "major units field", ceiling: `{"amountMinor": 1, "amount": 500.5, "currency": "INR"}`, wantMsg: `unknown field "amount"`},
		{name: "lower-case currency", ceiling: `{"amountMinor": 1, "currency": "inr"}`, want: ledger.ErrInvalidCurrency, wantMsg: `"inr" is not a three-letter ISO 4217 code`},
		{name: "long currency", ceiling: `{"amountMinor": 1, "currency": "RUPEE"}`, want: ledger.ErrInvalidCurrency},
		{name: "zero ceiling", ceiling: `{"amountMinor": 0, "currency": "INR"}`, want: ledger.ErrInvalidAmount, wantMsg: "ceiling must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c ledger.Claim
			err := json.Unmarshal([]byte(strings.Replace(claimJSON, "%s", tc.ceiling, 1)), &c)
			if err == nil {
				_, err = ledger.New(ledger.NewMemoryStore()).ClaimRun(context.Background(), c)
			}
			if tc.want == nil && tc.wantMsg == "" {
				if err != nil {
					t.Fatalf("got error %v, want nil", err)
				}
				return
			}
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("got error %v, want %v saying %q", err, tc.want, tc.wantMsg)
			}
		})
	}
}

func TestOutcomeJSON(t *testing.T) {
	tests := []struct {
		name    string
		outcome string
		want    error
		wantMsg string
	}{
		{name: "success with spend", outcome: `{"ok": true, "spentMinor": 1250, "currency": "INR"}`},
		{name: "spend omitted", outcome: `{"ok": true}`},
		{name: "fractional spend", outcome: `{"ok": true, "spentMinor": 12.5}`, want: ledger.ErrInvalidAmount, wantMsg: "spentMinor must be a whole number of minor units, got 12.5"},
		{name: "negative spend", outcome: `{"ok": true, "spentMinor": -3}`, want: ledger.ErrInvalidAmount, wantMsg: "spentMinor must not be negative, got -3"},
		{name: "currency mismatch", outcome: `{"ok": true, "spentMinor": 3, "currency": "USD"}`, want: ledger.ErrCurrencyMismatch, wantMsg: "outcome is in USD, run is in INR"},
		{name: "malformed currency", outcome: `{"ok": true, "currency": "usd"}`, want: ledger.ErrInvalidCurrency},
		{name: "failure without reason", outcome: `{"ok": false, "spentMinor": 3}`, want: ledger.ErrMissingFailureReason},
		{name: "success with a reason", outcome: `{"ok": true, "failureReason": "x"}`, want: ledger.ErrInvalidOutcome},
		{name: "failure reason with NUL", outcome: `{"ok": false, "failureReason": "a\u0000b"}`, want: ledger.ErrInvalidOutcome},
		{name: "unknown field", outcome: `{"ok": true, "costMajor": 1.5}`, wantMsg: `unknown field "costMajor"`},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := ledger.New(ledger.NewMemoryStore())
			if _, err := l.ClaimRun(ctx, storetest.NewClaim("run-1", "org_abc")); err != nil {
				t.Fatalf("ClaimRun: %v", err)
			}
			var o ledger.Outcome
			err := json.Unmarshal([]byte(tc.outcome), &o)
			if err == nil {
				_, err = l.RecordStep(ctx, "run-1", 0, o)
			}
			if tc.want == nil && tc.wantMsg == "" {
				if err != nil {
					t.Fatalf("got error %v, want nil", err)
				}
				return
			}
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("got error %v, want %v saying %q", err, tc.want, tc.wantMsg)
			}
		})
	}
}

func TestStepJSON(t *testing.T) {
	tests := []struct {
		name    string
		step    string
		wantMsg string // empty for a valid step
	}{
		{name: "integer estimate", step: `{"name": "a", "estimateMinor": 100}`},
		{name: "fractional estimate", step: `{"name": "a", "estimateMinor": 1.5}`, wantMsg: `step "a": invalid amount: estimateMinor must be a whole number of minor units, got 1.5`},
		{name: "unknown field", step: `{"name": "a", "costMajor": 1}`, wantMsg: `unknown field "costMajor"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s ledger.Step
			err := json.Unmarshal([]byte(tc.step), &s)
			switch {
			case tc.wantMsg == "" && (err != nil || s.EstimateMinor != 100):
				t.Errorf("got %+v, %v; want estimate 100 and no error", s, err)
			case tc.wantMsg != "" && (err == nil || !strings.Contains(err.Error(), tc.wantMsg)):
				t.Errorf("got error %v, want one saying %q", err, tc.wantMsg)
			}
		})
	}
}

// Decoding must never accept anything but whole, non-negative minor units,
// and what it accepts must survive a round trip unchanged.
func FuzzMoneyJSON(f *testing.F) {
	for _, seed := range []string{
		`{"amountMinor": 50000, "currency": "INR"}`, `{"amountMinor": 0.5, "currency": "INR"}`,
		`{"amountMinor": -1, "currency": "USD"}`, `{"amountMinor": 1e2, "currency": "EUR"}`,
		`{"amountMinor": 9223372036854775807, "currency": "JPY"}`, `{"amountMinor": 1} x`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var m ledger.Money
		if err := m.UnmarshalJSON([]byte(in)); err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("decoded %q into %+v, which fails Validate: %v", in, m, err)
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("encode %+v: %v", m, err)
		}
		var back ledger.Money
		if err := json.Unmarshal(out, &back); err != nil || back != m {
			t.Fatalf("round trip of %s: got %+v, %v; want %+v", out, back, err, m)
		}
	})
}
