package goja_test

import (
	"context"
	"encoding/json"
	"strings"
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
	// Long enough that a loaded machine's late timers still find it running.
	/(?=(a+)+b)/.test('a'.repeat(24));
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

// An activation stuck in a built-in that no interrupt can stop still
// returns at its deadline: its JavaScript runs on the unit's own goroutine,
// not its caller's, and the caller (the kernel, holding its lock; the
// judge, holding its own) goes on. The regular expression would run for
// hours; the goroutine left running it ends with the test binary.
// Seen failing (Activate did not return) with activations driven inline.
func TestStuckActivationReturnsAtItsDeadline(t *testing.T) {
	exec := goja.New(goja.Options{Deadline: 100 * time.Millisecond, Grace: 100 * time.Millisecond, OnStuck: func(string) {}})
	u, err := exec.Load(context.Background(), kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.stuck"},
		Code: []byte(`export default async function activate(cap) {
	/^(a+)+(?=b)/.test('a'.repeat(40) + '!');
}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = u.Close() }()
	done := make(chan error, 1)
	go func() { done <- u.Activate(context.Background(), executortest.NewBridge()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
			t.Fatalf("activate = %v, want a deadline error", err)
		}
	case <-time.After(time.Minute): // a guard against hanging, not a measurement
		t.Fatal("Activate did not return while its JavaScript was stuck in a built-in")
	}
}
