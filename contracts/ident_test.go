package contracts_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// Seen failing with IdentPattern's anchors removed (names with a valid
// prefix or suffix passed) and with its {0,40} widened.
func TestIdentifiers(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"c_invoice", true}, {"order", true}, {"x9_", true},
		{"a" + strings.Repeat("b", 40), true}, {"a" + strings.Repeat("b", 41), false},
		{"", false}, {"Invoice", false}, {"9lives", false}, {"_hidden", false}, {"a-b", false},
		{"a b", false}, {"a.b", false}, {`a"b`, false}, {"a'b", false}, {"x;drop table y", false},
		{"é", false}, {"a\n", false}, {"\na", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := contracts.ValidIdent(tc.name); got != tc.ok {
				t.Fatalf("ValidIdent(%q) = %v, want %v", tc.name, got, tc.ok)
			}
			q, err := contracts.QuoteIdent(tc.name)
			switch {
			case tc.ok && (err != nil || q != `"`+tc.name+`"`):
				t.Fatalf("QuoteIdent(%q) = %q, %v; want %q", tc.name, q, err, `"`+tc.name+`"`)
			case !tc.ok && !errors.Is(err, contracts.ErrInvalidIdent):
				t.Fatalf("QuoteIdent(%q) error = %v, want ErrInvalidIdent", tc.name, err)
			case !tc.ok && !strings.Contains(err.Error(), contracts.IdentPattern):
				t.Fatalf("QuoteIdent(%q) error = %q, want it to state the rule %s", tc.name, err, contracts.IdentPattern)
			}
		})
	}
}

// FuzzQuoteIdent: whatever the input, a quoted identifier is the input in
// double quotes with nothing inside that could end the quoting or the
// statement.
func FuzzQuoteIdent(f *testing.F) {
	for _, s := range []string{"a", "order", `a"b`, "a;b", "A", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		q, err := contracts.QuoteIdent(name)
		if err != nil {
			if !errors.Is(err, contracts.ErrInvalidIdent) {
				t.Fatalf("QuoteIdent(%q) error = %v, want ErrInvalidIdent", name, err)
			}
			return
		}
		inner := q[1 : len(q)-1]
		if q != `"`+name+`"` || strings.ContainsAny(inner, "\"';\\ \t\n.") || len(inner) > 41 {
			t.Fatalf("QuoteIdent(%q) = %q, want a plain name in double quotes", name, q)
		}
	})
}
