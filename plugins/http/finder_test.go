package http

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// The rolling-hash search answers what strings.Contains answers, for any
// text and tokens of several lengths.
func FuzzTokenFinder(f *testing.F) {
	f.Add("x op-token y", "op-token", "ab")
	f.Add("aaaaab", "aab", "b")
	f.Add("", "t", "tt")
	f.Fuzz(func(t *testing.T, text, tok1, tok2 string) {
		finder := newTokenFinder([]string{tok1, tok2})
		want := tok1 != "" && strings.Contains(text, tok1) || tok2 != "" && strings.Contains(text, tok2)
		if got := finder.in([]byte(text)); got != want {
			t.Fatalf("in(%q) with tokens %q, %q = %v, want %v", text, tok1, tok2, got, want)
		}
	})
}

// BenchmarkTokenFinder scans a body of MaxBodyBytes for two tokens, the
// most a request to an agent route costs.
func BenchmarkTokenFinder(b *testing.B) {
	finder := newTokenFinder([]string{"3f9c0a6e2b7d4c1f8e5a9b0d3c6f2e1a", "a71e"})
	text := []byte(strings.Repeat("x", MaxBodyBytes))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if finder.in(text) {
			b.Fatal("found a token in a body without one")
		}
	}
}

// BenchmarkTokenSearchThroughEscapes searches a body of MaxBodyBytes made
// of nested escapes, which keeps changing for every round: the most the
// search through escapes costs.
func BenchmarkTokenSearchThroughEscapes(b *testing.B) {
	f := newTokenFinders([]credential{{Credential: Credential{Token: "3f9c0a6e2b7d4c1f8e5a9b0d3c6f2e1a"}}, {Credential: Credential{Token: "a 1e"}}})
	unit := `%2525252541\\\\u0041+`
	text := strings.Repeat(unit, MaxBodyBytes/len(unit))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if f.holds(text, false) {
			b.Fatal("found a token in a body without one")
		}
	}
}

// The lenient decoders read well-formed escapes as the standard ones do:
// percent escapes as url.PathUnescape and url.QueryUnescape, the escapes of
// a JSON string as json.Unmarshal.
func FuzzUnescape(f *testing.F) {
	f.Add("op%2Dtoken+x%20", `"a\u0041\n\ud83d\ude00"`)
	f.Add("%zz%u0041", `"\\u0041"`)
	f.Fuzz(func(t *testing.T, pct, quoted string) {
		if want, err := url.PathUnescape(pct); err == nil && !strings.Contains(pct, "%u") {
			if got, _ := unescapePercent([]byte(pct), false); string(got) != want {
				t.Fatalf("unescapePercent(%q) = %q, want %q", pct, got, want)
			}
		}
		if want, err := url.QueryUnescape(pct); err == nil && !strings.Contains(pct, "%u") {
			if got, _ := unescapePercent([]byte(pct), true); string(got) != want {
				t.Fatalf("unescapePercent(%q, plus) = %q, want %q", pct, got, want)
			}
		}
		var want string
		if json.Unmarshal([]byte(quoted), &want) == nil && strings.HasPrefix(quoted, `"`) && strings.HasSuffix(quoted, `"`) && utf8.ValidString(quoted) {
			inner := quoted[1 : len(quoted)-1]
			if got, _ := unescapeJSON([]byte(inner)); string(got) != want {
				t.Fatalf("unescapeJSON(%q) = %q, want %q", inner, got, want)
			}
		}
	})
}
