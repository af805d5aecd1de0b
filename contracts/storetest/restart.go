package storetest

import (
	"context"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// restartExecutor runs the fake agent plugins of the restart test: each
// contributes one item to the "tool" point.
func restartExecutor() *kerneltest.Executor {
	exec := kerneltest.NewExecutor()
	for _, code := range []string{"tool", "tool-v2"} {
		exec.Register(code, func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
			_, err := h.Contribute(ctx, "tool", kerneltest.JSON(code))
			return err
		})
	}
	return exec
}

// bootKernel builds a kernel on a store's log and blobs with the same system plugins every time,
// as a composition root does, and restores it.
func bootKernel(tb testing.TB, log kernel.EventLog, blobs kernel.BlobStore, exec kernel.Executor) *kernel.Kernel {
	tb.Helper()
	k := kernel.New(kernel.Options{Name: "storetest", Log: log, Blobs: blobs, Executor: exec})
	if err := k.DefinePoint("tool", kernel.PointMeta{}); err != nil {
		tb.Fatal(err)
	}
	for id, key := range map[string]string{"sys.db": "db", "sys.extra": "extra"} {
		p := kernel.Plugin{
			Manifest: kernel.Manifest{ID: id, Version: "1", Provide: []string{key}},
			Activate: func(_ context.Context, c *kernel.Context) error { return c.Provide(key, id) },
		}
		if err := k.Install(p); err != nil {
			tb.Fatalf("install %s: %v", id, err)
		}
	}
	if err := k.Restore(context.Background()); err != nil {
		tb.Fatalf("restore: %v", err)
	}
	return k
}

// fiberSummary is what must survive a restart.
type fiberSummary struct {
	ID, Version, CodeHash string
	Enabled               bool
	State                 kernel.State
	Trust                 kernel.Trust
}

func summary(k *kernel.Kernel) map[string]fiberSummary {
	out := map[string]fiberSummary{}
	for _, v := range k.Fibers() {
		out[v.ID] = fiberSummary{v.ID, v.Version, v.CodeHash, v.Enabled, v.State, v.Trust}
	}
	return out
}

// A kernel persists system and agent plugins to the store; a new kernel on a
// reopened store restores exactly the same fibers (id, version, code hash,
// enabled, state, trust) and contributions. Seen failing with Read ordering
// by seq descending (agent.b came back enabled, agent.c came back).
func testKernelRestart(t *testing.T, loc Location) {
	ctx := context.Background()
	exec := restartExecutor()
	st1 := open(t, loc)
	k1 := bootKernel(t, st1.Log(), st1.Blobs(), exec)
	for _, id := range []string{"agent.a", "agent.b", "agent.c", "agent.d"} {
		m := kernel.Manifest{ID: id, Version: "1", Inject: []string{"db"}, Points: []string{"tool"}}
		if err := kerneltest.Agent(ctx, k1, m, "tool"); err != nil {
			t.Fatalf("propose %s: %v", id, err)
		}
	}
	upgrade := kernel.Manifest{ID: "agent.d", Version: "2", Inject: []string{"db"}, Points: []string{"tool"}}
	for _, step := range []func() error{
		func() error { return kerneltest.Agent(ctx, k1, upgrade, "tool-v2") },
		func() error { return k1.Disable(ctx, "agent.b") },
		func() error { return k1.Uninstall(ctx, "agent.c", false) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	before := summary(k1)
	if err := st1.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	st2 := open(t, loc)
	k2 := bootKernel(t, st2.Log(), st2.Blobs(), exec)
	after := summary(k2)
	if len(after) != len(before) {
		t.Fatalf("restored %d fibers %v, want %d %v", len(after), after, len(before), before)
	}
	for id, want := range before {
		if got := after[id]; got != want {
			t.Errorf("fiber %s restored as %+v, want %+v", id, got, want)
		}
	}
	got := map[string]any{}
	for _, c := range k2.Contributions("tool") {
		got[c.Fiber] = c.Item
	}
	if len(got) != 2 || got["agent.a"] != "tool" || got["agent.d"] != "tool-v2" {
		t.Fatalf("restored tool contributions = %v, want agent.a: tool and agent.d: tool-v2", got)
	}
}
