package isolated_test

import (
	"context"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/executortest"
	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The first Load fills the pool; later Loads take started children, which
// serve their plugin like any other; the pool empties when unused for
// WarmIdle. Seen failing with take never taking a ready child (the pool
// stays at two) and with empty doing nothing.
func TestWarmPool(t *testing.T) {
	// WarmIdle leaves a loaded machine time to start both children before
	// the unused pool empties (seen flaking at 300 ms under -race).
	exec := newExecutor(t, isolated.Options{Warm: 2, WarmIdle: 3 * time.Second})
	env := executortest.NewEnv(t, exec)
	if exec.Warming() || exec.Ready() != 0 {
		t.Fatalf("before any Load: got warming %v, %d ready; want false, 0", exec.Warming(), exec.Ready())
	}
	code := `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'hello', handler: async () => 'hello' });
}`
	if err := mount(t, env.K, "agent.first", code); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two children are ready", func() bool { return exec.Ready() == 2 })
	isolated.SetRefillAfter(exec, time.Hour) // the count below must not move under it
	if err := mount(t, env.K, "agent.second", `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'second', handler: async () => 'second' });
}`); err != nil {
		t.Fatal(err)
	}
	if got := exec.Ready(); got != 1 {
		t.Fatalf("ready after a Load from the pool: got %d, want 1", got)
	}
	out, err := tool(t, env.K, "second")(context.Background())
	if err != nil || out != "second" {
		t.Fatalf("call on a pooled child: got %v, %v; want second", out, err)
	}
	waitFor(t, "the pool empties", func() bool { return !exec.Warming() && exec.Ready() == 0 })
}

// A pooled child counts as ready only once it has answered its warm-up, so
// a Load that takes it waits neither for the process to start nor for its
// first run of JavaScript. Here the children never answer: the first Load
// fails at its deadline and the pool fills, but no child ever becomes
// ready. Seen failing (two ready at once) with fill not warming up.
func TestPoolChildIsReadyOnlyOnceItAnswered(t *testing.T) {
	exec := newExecutor(t, isolated.Options{Warm: 2, Env: []string{muteEnv + "=1"},
		Runtime: goja.Options{Deadline: 200 * time.Millisecond}})
	isolated.SetRefillAfter(exec, time.Millisecond)
	code := []byte(`export default async function activate(cap) {}`)
	_, err := exec.Load(context.Background(), kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.mute", Version: "1"}, Code: code, CodeHash: kernel.HashCode(code)})
	if err == nil {
		t.Fatal("Load in a child that never answers succeeded")
	}
	if !exec.Warming() {
		t.Fatal("the pool is not filling after a Load")
	}
	for range 50 {
		if n := exec.Ready(); n != 0 {
			t.Fatalf("%d children that never answered count as ready", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
