package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Money is an amount in minor units (paise, cents) with its ISO 4217 currency.
// 50000 INR minor units is ₹500.00. There is no fractional form.
type Money struct {
	// AmountMinor is the amount in minor units; it is never negative.
	AmountMinor int64 `json:"amountMinor"`
	// Currency is a three-letter upper-case ISO 4217 code such as "INR".
	Currency string `json:"currency"`
}

// Validate reports whether m has a well-formed currency and a non-negative amount.
func (m Money) Validate() error {
	if err := checkCurrency(m.Currency); err != nil {
		return err
	}
	if m.AmountMinor < 0 {
		return fmt.Errorf("%w: amountMinor must not be negative, got %d", ErrInvalidAmount, m.AmountMinor)
	}
	return nil
}

// UnmarshalJSON decodes {"amountMinor": <integer>, "currency": "<code>"},
// rejecting fractional, negative, quoted or missing amounts, unknown fields
// and malformed currencies, so that no float ever stands in for money.
func (m *Money) UnmarshalJSON(data []byte) error {
	var raw struct {
		AmountMinor json.RawMessage `json:"amountMinor"`
		Currency    string          `json:"currency"`
	}
	if err := decodeStrict(data, &raw); err != nil {
		return fmt.Errorf("money: %w", err)
	}
	if len(raw.AmountMinor) == 0 {
		return fmt.Errorf("%w: amountMinor is required", ErrInvalidAmount)
	}
	amount, err := parseMinor("amountMinor", raw.AmountMinor)
	if err != nil {
		return err
	}
	v := Money{AmountMinor: amount, Currency: raw.Currency}
	if err := v.Validate(); err != nil {
		return err
	}
	*m = v
	return nil
}

// checkCurrency accepts three upper-case ASCII letters, the ISO 4217 shape.
func checkCurrency(code string) error {
	if len(code) != 3 {
		return fmt.Errorf("%w: %q is not a three-letter ISO 4217 code", ErrInvalidCurrency, code)
	}
	for i := 0; i < len(code); i++ {
		if code[i] < 'A' || code[i] > 'Z' {
			return fmt.Errorf("%w: %q is not a three-letter ISO 4217 code", ErrInvalidCurrency, code)
		}
	}
	return nil
}

// parseMinor reads a JSON integer literal of minor units. Anything else (a
// fraction, an exponent, a string, a negative number) is refused with a
// message naming the field and the offending text.
func parseMinor(field string, raw json.RawMessage) (int64, error) {
	text := string(bytes.TrimSpace(raw))
	switch {
	case text == "" || text == "null":
		return 0, fmt.Errorf("%w: %s must be a whole number of minor units, got %s", ErrInvalidAmount, field, orEmpty(text))
	case text[0] == '-':
		return 0, fmt.Errorf("%w: %s must not be negative, got %s", ErrInvalidAmount, field, text)
	case bytes.ContainsAny(raw, ".eE"):
		return 0, fmt.Errorf("%w: %s must be a whole number of minor units, got %s", ErrInvalidAmount, field, text)
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%w: %s is out of range, got %s", ErrInvalidAmount, field, text)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %s must be a JSON integer, got %s", ErrInvalidAmount, field, text)
	}
	return n, nil
}

func orEmpty(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// addMinor adds two non-negative amounts, refusing to overflow.
func addMinor(a, b int64) (int64, error) {
	if b > math.MaxInt64-a {
		return 0, fmt.Errorf("%w: total spend overflows int64 (%d + %d)", ErrInvalidAmount, a, b)
	}
	return a + b, nil
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}
