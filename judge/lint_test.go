package judge

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/sms-baseline/sms/contracts/agentsource"
)

const activate = "export default async function activate(cap) {}\n"

// The lint gate refuses what compiles code or reaches for modules, naming
// the line, and accepts ordinary agent code.
// Seen failing with forbidden returning "" for each node type.
func TestLint(t *testing.T) {
	cases := []struct {
		name, code, want string
	}{
		{"ordinary", "const xs = [1, 2].map((x) => x * 2);\nconst o = { a: { b: `t${xs}` } };\n" + activate, ""},
		{"names in strings are fine", "const s = 'eval Function require';\n" + activate, ""},
		{"eval", activate + "eval('1')", "line 2: eval is not allowed"},
		{"indirect eval", activate + "(0, globalThis.eval)('1')", ""}, // a property named eval is data
		{"Function", activate + "const f = Function('return 1')", "Function is not allowed"},
		{"new Function", "new Function('x');\n" + activate, "line 1: Function"},
		{"require", activate + "require('fs')", "require is not allowed"},
		{"constructor", activate + "const F = (() => 1).constructor", ".constructor is not allowed"},
		{"constructor by name", activate + "const F = (() => 1)['constructor']", `"constructor" is not allowed`},
		{"with", "function f(o) { with (o) { x; } }\n" + activate, "with"},
		{"import", "import x from 'y';\n" + activate, "line 1: import is not allowed"},
		{"dynamic import", activate + "import('y')", "line 2: import is not allowed"},
		{"other export", activate + "export const a = 1", "line 2: the only export allowed"},
		{"two exports", activate + activate, "only one export"},
		{"no export", "function activate(cap) {}", "no top-level `export default"},
		{"nested export", "function f() {\n" + activate + "}", "no top-level"},
		{"syntax", "export default async function activate(cap) {", "unexpected end of input"},
		{"too large", activate + "//" + strings.Repeat("x", MaxSourceBytes), "more than the limit"},
		{"too nested", activate + strings.Repeat("(", 100) + strings.Repeat(")", 100), "nest 100 levels"},
		{"deep in a function", "function f() { if (true) { return () => eval('1'); } }\n" + activate, "line 1: eval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := lint(c.code)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("lint error = %v, want %q", err, c.want)
			}
		})
	}
}

// The lint gate never opens a file named by a sourceMappingURL comment.
// Seen failing with parser.WithDisableSourceMaps removed from package
// agentsource's parse and the map comment at the end of the wrapped source.
func TestLintNeverReadsSourceMaps(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := syscall.Mkfifo("x.map", 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- lint(activate + "//# sourceMappingURL=x.map") }()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		if f, err := os.OpenFile("x.map", os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
			t.Fatal("the lint gate opened the source map")
		} else if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
	}
}

// lint never panics on any input, and what it accepts parses as one
// module with its export at the top level.
func FuzzLint(f *testing.F) {
	for _, s := range []string{
		activate,
		activate + "eval('x')",
		"import x from 'y'\n" + activate,
		"function f(){ with (a) {} }\n" + activate,
		"`${`${activate}`}`",
		activate + "new Function('a', 'b')",
		"export default function (cap) {}\n(0, 1)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if len(code) > 4096 {
			return
		}
		if err := lint(code); err == nil {
			if _, err := agentsource.Prepare(code, sourceLimits); err != nil {
				t.Fatalf("lint accepted %q, which does not parse: %v", code, err)
			}
		}
	})
}
