package agentsource

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

const activate = "export default async function activate(cap) {}\n"

// The export becomes a plain declaration in place: lines and columns stay,
// an anonymous function is named, and a following line that starts with a
// parenthesis does not call the function.
func TestPrepareRewritesTheExport(t *testing.T) {
	cases := []struct{ code, want, name string }{
		{"export default async function activate(cap) {}", "               async function activate(cap) {}", "activate"},
		{"export  default\tfunction main(cap) {}", "               \tfunction main(cap) {}", "main"},
		{"export default async function(cap) {}", "               async function __default(cap) {}", "__default"},
		{"export\ndefault function activate(cap) {}\n(0, 1)", "      \n        function activate(cap) {}\n(0, 1)", "activate"},
		{"// export default function x() {}\nexport default function activate(cap) {}",
			"// export default function x() {}\n               function activate(cap) {}", "activate"},
	}
	for _, c := range cases {
		p, err := Prepare(c.code, Limits{})
		if err != nil {
			t.Fatalf("Prepare(%q): %v", c.code, err)
		}
		want := wrapperPrefix + c.want + "\n;return " + c.name + "})"
		if p.Source != want || p.Name != c.name {
			t.Errorf("Prepare(%q) = %q naming %q, want %q naming %q", c.code, p.Source, p.Name, want, c.name)
		}
	}
}

// Each refusal names its problem and, where there is one, its line; the
// package's wording is what the executors report.
func TestPrepareRefuses(t *testing.T) {
	cases := []struct {
		name, code string
		problem    Problem
		line       int
		want       string
	}{
		{"too large", activate + "// " + strings.Repeat("x", DefaultMaxBytes), TooLarge, 0, "exceeds the limit of 262144"},
		{"too nested", activate + strings.Repeat("(", 100) + strings.Repeat(")", 100), TooNested, 0, "nest 100 levels deep, more than the limit of 64"},
		{"syntax", activate + "const = 1", Syntax, 2, "line 2: "},
		{"unexpected end", "export default async function activate(cap) {", UnexpectedEnd, 1, "line 1: Unexpected end of input"},
		{"import", "import fs from 'fs';\n" + activate, Import, 1, "line 1: import is not supported"},
		{"dynamic import", activate + "const m = import('x');", Import, 2, "import is not supported"},
		{"named export", activate + "export const x = 1;", OtherExport, 2, "line 2: the only export allowed"},
		{"two exports", activate + activate, SecondExport, 2, "only one export"},
		{"no export", "async function activate(cap) {}", NoExport, 0, "no `export default"},
		{"export in a string", "const s = 'export default function';", NoExport, 0, "export"},
		{"nested export", "function f() {\n" + activate + "}", NotTopLevel, 0, "top-level"},
		{"export in a comment", "// export default function x() {}\nfunction y(cap) {}", NoExport, 0, "no `export default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Prepare(c.code, Limits{})
			var e *Error
			if !errors.As(err, &e) || e.Problem != c.problem || e.Line != c.line || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Prepare error = %#v (%v), want problem %d on line %d saying %q", e, err, c.problem, c.line, c.want)
			}
		})
	}
}

// A textual export inside a string or comment is not an export, even next
// to a top-level function of the name it spells: the declaration must
// begin where the export was written. Seen failing (the code was accepted,
// its activate the plain function) with the position check removed from
// declared, as both earlier copies of this front end had it.
func TestPrepareRefusesAnExportSpelledInAString(t *testing.T) {
	for _, code := range []string{
		"const s = 'export default function activate(';\nfunction activate(cap) {}",
		"/* export default function activate( */\nasync function activate(cap) {}",
		"const s = `export default function (`;\nfunction __default(cap) {}",
	} {
		_, err := Prepare(code, Limits{})
		var e *Error
		if !errors.As(err, &e) || e.Problem != NoExport {
			t.Errorf("Prepare(%q) = %v, want NoExport", code, err)
		}
	}
}

// The limits are inclusive, and a zero field takes its default.
func TestPrepareLimits(t *testing.T) {
	nested := activate + strings.Repeat("[", 10) + strings.Repeat("]", 10)
	if _, err := Prepare(nested, Limits{MaxNesting: 10}); err != nil {
		t.Fatalf("nesting 10 under a limit of 10: %v", err)
	}
	if _, err := Prepare(nested, Limits{MaxNesting: 9}); err == nil {
		t.Fatal("nesting 10 under a limit of 9 was accepted")
	}
	if _, err := Prepare(activate, Limits{MaxBytes: len(activate)}); err != nil {
		t.Fatalf("%d bytes under a limit of %[1]d: %v", len(activate), err)
	}
	if _, err := Prepare(activate, Limits{MaxBytes: len(activate) - 1}); err == nil {
		t.Fatal("code over MaxBytes was accepted")
	}
	deep := activate + strings.Repeat("(", DefaultMaxNesting+1) + strings.Repeat(")", DefaultMaxNesting+1)
	if _, err := Prepare(deep, Limits{}); err == nil {
		t.Fatal("the zero Limits did not apply the default nesting")
	}
}

func TestNesting(t *testing.T) {
	cases := []struct {
		code string
		want int
	}{
		{"", 0},
		{"f(a[1], {b: 2})", 2},
		{"'((((' + \"[[[[\"", 0},
		{"// ((((\n/* [[[[ */ x", 0},
		{"`${`${a}`}`", 2},
		{"`(${ {a: [1]} })`", 3},
		{"'\\'(' + (1)", 1},
		{"/* never closed (((", 0},
	}
	for _, c := range cases {
		if got := Nesting(c.code); got != c.want {
			t.Errorf("Nesting(%q) = %d, want %d", c.code, got, c.want)
		}
	}
}

// A sourceMappingURL comment never makes the parser open a file. The map
// is a FIFO: a parser that tried to read it would block until the test
// opens the other end, which the test detects without any timing. Seen
// failing with parser.WithDisableSourceMaps removed from parse.
func TestParseNeverReadsSourceMaps(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := syscall.Mkfifo("x.map", 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := parse("var a = 1;\n//# sourceMappingURL=x.map")
		done <- err
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		// Opening the write end without blocking succeeds only while a
		// reader has the FIFO open; closing it lets that reader go on.
		if f, err := os.OpenFile("x.map", os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
			t.Fatal("x.map was opened for reading")
		} else if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
	}
}

// Prepare never panics, every refusal is an *Error, and whatever it accepts
// is one wrapped function whose body declares the export at the top level.
func FuzzPrepare(f *testing.F) {
	seeds := []string{
		"export default async function activate(cap) {}",
		"import x from 'y'\nexport default function activate(cap) {}",
		"export default async function activate(cap) { await cap.log(`${1}`) }\nexport const a = 1",
		"'export default function'; export default function a(){}",
		"function f(){ export default function g(){} }",
		"export default 42",
		"`${",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		p, err := Prepare(code, Limits{MaxBytes: 4096, MaxNesting: 32})
		if err != nil {
			if _, ok := errors.AsType[*Error](err); !ok {
				t.Fatalf("Prepare error %v is not an *Error", err)
			}
			return
		}
		if !strings.HasPrefix(p.Source, wrapperPrefix) || len(p.Body()) == 0 {
			t.Fatalf("Prepare accepted %q as %q without a top-level export", code, p.Source)
		}
	})
}
