package pgstore_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The store speaks to Postgres through pgx alone: it imports no other
// driver, and nothing outside pgx's own dependencies is linked in.
func TestImportsOnlyPgx(t *testing.T) {
	const module = "github.com/sms-baseline/sms/"
	tests := []struct {
		name    string
		format  string
		allowed []string
	}{
		{"direct imports", `{{join .Imports "\n"}}`, []string{"github.com/jackc/pgx/v5", module + "ledger"}},
		{"all dependencies", `{{range .Deps}}{{.}}{{"\n"}}{{end}}`, []string{"github.com/jackc/", "golang.org/x/text/", module + "ledger"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-f", tc.format, ".").Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			for _, path := range strings.Fields(string(out)) {
				first, _, _ := strings.Cut(path, "/")
				if !strings.Contains(first, ".") {
					continue // standard library
				}
				if !hasAnyPrefix(path, tc.allowed) {
					t.Errorf("got %s, want only packages under %v", path, tc.allowed)
				}
			}
		})
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
