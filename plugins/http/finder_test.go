package http

import (
	"strings"
	"testing"
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
