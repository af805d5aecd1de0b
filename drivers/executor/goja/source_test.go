package goja

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/sms-baseline/sms/contracts/agentsource"
	"github.com/sms-baseline/sms/drivers/executor/executortest"
	"github.com/sms-baseline/sms/kernel"
)

// A sourceMappingURL comment never makes the host open a file when the
// code compiles more code at run time (where compiling is refused
// outright); package agentsource tests the parse of agent code itself. The
// map is a FIFO: a parser that tried to read it would block until the test
// opens the other end, which the test detects without any timing. Seen
// failing with SetParserOptions removed from newRuntime.
func TestSourceMapsAreNeverRead(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := syscall.Mkfifo("x.map", 0o600); err != nil {
		t.Fatal(err)
	}
	const mapLine = "\n//# sourceMappingURL=x.map"
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

// Compile never panics, and every refusal, the front end's or the
// compiler's, wraps ErrSource.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"export default async function activate(cap) {}",
		"import x from 'y'\nexport default function activate(cap) {}",
		"export default async function activate(cap) { let a; let a; }",
		"export default function activate(cap) { with (cap) {} }",
		"export default 42",
		"`${",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		_, err := Compile(code, agentsource.Limits{MaxBytes: 4096, MaxNesting: 32})
		if err != nil && !errors.Is(err, ErrSource) {
			t.Fatalf("Compile error %v does not wrap ErrSource", err)
		}
	})
}
