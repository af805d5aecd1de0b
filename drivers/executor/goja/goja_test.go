package goja_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/executortest"
	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/kernel"
)

func factory(_ testing.TB, cfg executortest.Config) kernel.Executor {
	return goja.New(goja.Options{Deadline: cfg.Deadline, MaxCallStackSize: cfg.MaxCallStackSize})
}

// The shared conformance suite.
func TestConformance(t *testing.T) { executortest.Run(t, factory) }

func activate(t *testing.T, exec *goja.Executor, code string) *executortest.Bridge {
	t.Helper()
	u, err := exec.Load(context.Background(), kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.t", Version: "1"}, Code: []byte(code)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	b := executortest.NewBridge()
	if err := u.Activate(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

// Date and Math.random come from the sources in Options.
// Seen failing with SetTimeSource and SetRandSource removed from newRuntime.
func TestDeterministicSources(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	exec := goja.New(goja.Options{Now: func() time.Time { return at }, Rand: func() float64 { return 0.25 }})
	b := activate(t, exec, `export default async function activate(cap) {
	await cap.provide('out', [Date.now(), new Date().toISOString(), Math.random()]);
}`)
	var got []any
	if err := json.Unmarshal(b.Provided["out"], &got); err != nil {
		t.Fatal(err)
	}
	want := []any{float64(at.UnixMilli()), "2030-01-02T03:04:05.000Z", 0.25}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sources = %v, want %v", got, want)
		}
	}
}

// JavaScript stuck in a built-in that an interrupt cannot stop is reported
// through OnStuck once the grace period after the deadline has passed.
// Seen failing with the grace timer removed from expire.
func TestStuckBuiltinIsReported(t *testing.T) {
	stuck := make(chan string, 1)
	exec := goja.New(goja.Options{Deadline: 50 * time.Millisecond, Grace: 50 * time.Millisecond,
		OnStuck: func(plugin string) {
			select {
			case stuck <- plugin:
			default:
			}
		}})
	u, err := exec.Load(context.Background(), kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.regex"},
		Code: []byte(`export default async function activate(cap) {
	// A backtracking-only pattern: the match runs in Go, which goja cannot interrupt.
	/(?=(a+)+b)/.test('a'.repeat(20));
}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = u.Close() }()
	err = u.Activate(context.Background(), executortest.NewBridge())
	if err == nil {
		t.Fatal("activation stuck in a built-in succeeded, want a deadline error")
	}
	select {
	case got := <-stuck:
		if got != "agent.regex" {
			t.Fatalf("OnStuck(%q), want agent.regex", got)
		}
	case <-time.After(time.Minute): // a guard against hanging, not a measurement
		t.Fatal("OnStuck was never called")
	}
}

func BenchmarkToolCall(b *testing.B) { executortest.BenchToolCall(b, goja.New(goja.Options{})) }

func BenchmarkMount(b *testing.B) { executortest.BenchMount(b, goja.New(goja.Options{})) }
