package ledger_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/ledger/internal/transportcheck"
)

// TestNoTransport is guarantee 6: the core imports nothing that can reach
// outside the process, exports no callback, declares no port method named for
// an outbound effect, and holds no float. Seen failing with `import _ "net"`
// added to ledger.go and with a Notify method added to Store.
func TestNoTransport(t *testing.T) {
	violations, err := transportcheck.Check(".")
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	for _, v := range violations {
		t.Errorf("the core could reach outside the process: %s", v)
	}
}

// TestNoTransportBites injects each kind of violation into a copy of the core
// and requires the check to name it, so that a green TestNoTransport means
// something. Seen failing with the outbound-name rule removed from the checker.
func TestNoTransportBites(t *testing.T) {
	tests := []struct {
		name   string
		file   string // added to the copy as extra.go, when set
		port   string // inserted as the first method of Store, when set
		wantIn string // a violation must contain this
	}{
		{name: "http fetch", file: "import \"net/http\"\nvar _ = http.Get", wantIn: "import: net/http"},
		{name: "raw socket", file: "import \"net\"\nvar _ = net.Dial", wantIn: "import: net"},
		{name: "subprocess", file: "import _ \"os/exec\"", wantIn: "import: os/exec"},
		{name: "syscall", file: "import _ \"syscall\"", wantIn: "import: syscall"},
		{name: "unsafe", file: "import _ \"unsafe\"", wantIn: "import: unsafe"},
		{name: "plugin", file: "import _ \"plugin\"", wantIn: "import: plugin"},
		{name: "dependency", file: "import _ \"github.com/jackc/pgx/v5\"", wantIn: "non-standard package github.com/jackc/pgx/v5"},
		{name: "net reached through tls", file: "import _ \"crypto/tls\"", wantIn: "dependency: net"},
		{name: "hidden behind a build tag", file: "//go:build never\n\npackage ledger\n\nimport _ \"net\"", wantIn: "import: net"},
		{name: "notify on the store port", port: "Notify(ctx context.Context, runID string) error", wantIn: "outbound name: Store.Notify"},
		{name: "webhook on the store port", port: "SaveWebhook(url string) error", wantIn: "outbound name: Store.SaveWebhook"},
		{name: "callback method", file: "func (l *Ledger) OnStep(f func(Step)) {}", wantIn: "Ledger.OnStep takes a function"},
		{name: "callback in options", file: "type Hooks struct{ After func() }\nfunc Watch(h Hooks) {}", wantIn: "Watch takes a function"},
		{name: "callback variable", file: "var Hook func(Run)", wantIn: "variable Hook holds a function"},
		{name: "float money", file: "func ratio() float64 { return 0.5 }", wantIn: "float: float64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyCore(t)
			if tc.file != "" {
				src := tc.file
				if !strings.Contains(src, "package ledger") {
					src = "package ledger\n\n" + src
				}
				writeFile(t, filepath.Join(dir, "extra.go"), src)
			}
			if tc.port != "" {
				insertPortMethod(t, dir, tc.port)
			}
			violations, err := transportcheck.Check(dir)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			for _, v := range violations {
				if strings.Contains(v.String(), tc.wantIn) {
					return
				}
			}
			t.Errorf("violations: got %v, want one containing %q", violations, tc.wantIn)
		})
	}
}

// copyCore copies the core's non-test Go files into a module of their own.
func copyCore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatalf("glob: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		writeFile(t, filepath.Join(dir, f), string(src))
	}
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/corecopy\n\ngo 1.26\n")
	return dir
}

func insertPortMethod(t *testing.T, dir, method string) {
	t.Helper()
	path := filepath.Join(dir, "contract.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read contract.go: %v", err)
	}
	const decl = "type Store interface {\n"
	if !strings.Contains(string(src), decl) {
		t.Fatalf("contract.go: got no %q, want the Store port declared there", decl)
	}
	writeFile(t, path, strings.Replace(string(src), decl, decl+"\t"+method+"\n", 1))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}
