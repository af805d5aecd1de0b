package judge_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// BenchmarkJudgeSubmit measures a full submission that mounts: every gate
// (the load gate activates the plugin in a throwaway unit), the mount, the
// invariants, and the undo of the version it replaces.
//
// "isolated" starts a child for the load gate and one for the mount, as
// submissions back to back must; "isolated-warm" is the latency a
// submission sees when the executor's warm pool is ready (the wait for the
// pool to refill between submissions is not timed).
func BenchmarkJudgeSubmit(b *testing.B) {
	executors := []struct {
		name string
		new  func(testing.TB) kernel.Executor
		warm bool
	}{
		{"goja", func(testing.TB) kernel.Executor { return inProcess() }, false},
		{"isolated", inChild, false},
		{"isolated-warm", func(t testing.TB) kernel.Executor { return childExecutor(t, 2) }, true},
	}
	code := `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'overdue', description: 'unpaid invoices', input_schema: { type: 'object' },
		handler: async (input) => (await cap.invoke('svc', 'echo', input)).args });
}`
	for _, e := range executors {
		b.Run(e.name, func(b *testing.B) {
			exec := e.new(b)
			w := newWorld(b, exec, judge.Options{})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if e.warm {
					b.StopTimer()
					waitWarm(b, exec.(*isolated.Executor), 2)
					b.StartTimer()
				}
				m := kernel.Manifest{ID: "agent.bench", Version: strconv.Itoa(i + 1), Inject: []string{"svc"}, Points: []string{"tool"}}
				v, err := w.judge.Submit(ctx, m, code, "bench")
				if err != nil || v.Status != judge.StatusMounted {
					b.Fatalf("submit = %+v, %v; want mounted", v, err)
				}
			}
			b.StopTimer()
			if err := w.k.Uninstall(ctx, "agent.bench", false); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// waitWarm waits until exec has n children ready. The pool fills after
// the first Load, so before that it returns at once.
func waitWarm(b *testing.B, exec *isolated.Executor, n int) {
	deadline := time.Now().Add(30 * time.Second)
	for exec.Ready() < n && time.Now().Before(deadline) {
		if !exec.Warming() {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
	if exec.Ready() < n {
		b.Fatalf("warm children: got %d, want %d", exec.Ready(), n)
	}
}
