package sqlstore

import (
	"regexp"
	"strings"
	"testing"
)

// Each case was seen failing with its branch of skipLiteral removed (the ?
// inside the literal became a numbered placeholder).
func TestNumberPlaceholders(t *testing.T) {
	cases := []struct {
		name, in, want string
		n              int
	}{
		{"none", `SELECT 1`, `SELECT 1`, 0},
		{"in order", `SELECT * FROM t WHERE a = ? AND b = ?`, `SELECT * FROM t WHERE a = $1 AND b = $2`, 2},
		{"adjacent", `VALUES (?,?)`, `VALUES ($1,$2)`, 2},
		{"string", `SELECT '?', ?`, `SELECT '?', $1`, 1},
		{"doubled quote", `SELECT 'it''s ?', ?`, `SELECT 'it''s ?', $1`, 1},
		{"escape string", `SELECT E'\'?', ?`, `SELECT E'\'?', $1`, 1},
		{"backslash in plain string", `SELECT '\', ?`, `SELECT '\', $1`, 1},
		{"identifier", `SELECT "a?b" FROM t WHERE x = ?`, `SELECT "a?b" FROM t WHERE x = $1`, 1},
		{"line comment", "SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2", 2},
		{"block comment", `SELECT /* a /* ? */ ? */ ?`, `SELECT /* a /* ? */ ? */ $1`, 1},
		{"dollar quoted", `SELECT $$?$$, $x$ ? $x$, ?`, `SELECT $$?$$, $x$ ? $x$, $1`, 1},
		{"dollar in identifier", `SELECT a$b$ FROM t WHERE c = ?`, `SELECT a$b$ FROM t WHERE c = $1`, 1},
		{"unterminated string", `SELECT ? 'abc?`, `SELECT $1 'abc?`, 1},
		{"digit after placeholder", `SELECT ?0`, `SELECT $1 0`, 1},
		{"ten", strings.Repeat("?,", 10), "$1,$2,$3,$4,$5,$6,$7,$8,$9,$10,", 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, n := NumberPlaceholders(tc.in)
			if got != tc.want || n != tc.n {
				t.Fatalf("NumberPlaceholders(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.n)
			}
		})
	}
}

var (
	numbered       = regexp.MustCompile(`\$[0-9]+`)
	digitAfterMark = regexp.MustCompile(`\?[0-9]`)
)

// FuzzNumberPlaceholders checks that the rewrite only ever turns ? into $n:
// for input without $ (and without a digit right after a ?), turning every $n back into ? gives the input, and the
// count matches the ? that disappeared.
func FuzzNumberPlaceholders(f *testing.F) {
	for _, s := range []string{`SELECT ?`, `'?' "?" -- ?`, "/* ? */ ?", `E'\'' ?`, `$a$ ? $a$ ?`, `'`, `/*`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, n := NumberPlaceholders(in)
		if got, want := strings.Count(out, "?"), strings.Count(in, "?")-n; got != want {
			t.Fatalf("NumberPlaceholders(%q) = %q, %d: %d ? left, want %d", in, out, n, got, want)
		}
		if strings.Contains(in, "$") || digitAfterMark.MatchString(in) {
			return
		}
		if back := numbered.ReplaceAllString(out, "?"); back != in {
			t.Fatalf("NumberPlaceholders(%q) = %q: changed more than placeholders (%q)", in, out, back)
		}
	})
}
