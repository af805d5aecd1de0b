package goja

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/sms-baseline/sms/drivers/executor/executortest"
	"github.com/sms-baseline/sms/kernel"
)

var testLimits = SourceLimits{MaxBytes: DefaultMaxSourceBytes, MaxNesting: DefaultMaxSourceNesting}

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
		src, _, err := Prepare(c.code, testLimits)
		if err != nil {
			t.Fatalf("Prepare(%q): %v", c.code, err)
		}
		want := wrapperPrefix + c.want + "\n;return " + c.name + "})"
		if src != want {
			t.Errorf("Prepare(%q) = %q, want %q", c.code, src, want)
		}
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

// A sourceMappingURL comment never makes the host open a file: not when
// the parser reads agent code, not when the code compiles more code at run
// time (where compiling is refused outright). The map is a FIFO: a parser that tried to read it would block until
// the test opens the other end, which the test detects without any timing.
// Seen failing with parser.WithDisableSourceMaps removed from parse, and
// with SetParserOptions removed from newRuntime.
func TestSourceMapsAreNeverRead(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := syscall.Mkfifo("x.map", 0o600); err != nil {
		t.Fatal(err)
	}
	const mapLine = "\n//# sourceMappingURL=x.map"
	t.Run("parse", func(t *testing.T) {
		neverOpened(t, "x.map", func() error {
			_, err := parse("var a = 1;" + mapLine)
			return err
		})
	})
	t.Run("run time", func(t *testing.T) {
		code := `export default async function activate(cap) {
	await cap.provide('out', new Function("return 'compiled'` + strings.ReplaceAll(mapLine, "\n", `\n`) + `")());
}`
		bridge := executortest.NewBridge()
		var activateErr error
		neverOpened(t, "x.map", func() error {
			u, err := New(Options{}).Load(context.Background(), kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.map"}, Code: []byte(code)})
			if err != nil {
				return err
			}
			defer func() { _ = u.Close() }()
			activateErr = u.Activate(context.Background(), bridge)
			return nil
		})
		// Nothing compiles at run time any more: the attempt itself throws.
		if activateErr == nil || !strings.Contains(activateErr.Error(), "code generation from strings is disabled") {
			t.Fatalf("activate = %v, want code generation refused", activateErr)
		}
	})
}

// neverOpened runs fn and fails the test if, meanwhile, anything opens the
// FIFO at path for reading.
func neverOpened(t *testing.T, path string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
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
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
			t.Fatalf("%s was opened for reading", path)
		} else if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
	}
}

// Prepare never panics, and whatever it accepts is one wrapped function
// with a top-level assignment of the export.
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
		src, prg, err := Prepare(code, SourceLimits{MaxBytes: 4096, MaxNesting: 32})
		if err != nil {
			if !errors.Is(err, ErrSource) {
				t.Fatalf("Prepare error %v does not wrap ErrSource", err)
			}
			return
		}
		if !strings.HasPrefix(src, wrapperPrefix) || len(WrapperBody(prg)) == 0 {
			t.Fatalf("Prepare accepted %q as %q without a top-level export", code, src)
		}
	})
}
