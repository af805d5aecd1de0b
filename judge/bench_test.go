package judge_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/executortest"
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
// pool to refill between submissions is not timed). Their child is this
// test binary; the "sandbox" variants run the product's child, cmd/sms-sandbox,
// built for the benchmark.
func BenchmarkJudgeSubmit(b *testing.B) {
	sandbox := buildSandbox(b)
	executors := []struct {
		name string
		new  func(testing.TB) kernel.Executor
		warm bool
	}{
		{"goja", func(testing.TB) kernel.Executor { return inProcess() }, false},
		{"isolated", inChild, false},
		{"isolated-warm", func(t testing.TB) kernel.Executor { return childExecutor(t, 2) }, true},
		{"sandbox", func(t testing.TB) kernel.Executor { return sandboxExecutor(t, sandbox, 0) }, false},
		{"sandbox-warm", func(t testing.TB) kernel.Executor { return sandboxExecutor(t, sandbox, 2) }, true},
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
				// Each version's code differs, as a new version's does.
				v, err := w.judge.Submit(ctx, m, code+"\n// version "+m.Version, "bench")
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

// buildSandbox builds cmd/sms-sandbox into a temporary directory.
func buildSandbox(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), isolated.SandboxProgram)
	if msg, err := exec.Command("go", "build", "-o", out, "../cmd/sms-sandbox").CombinedOutput(); err != nil {
		b.Fatalf("build sms-sandbox: %v\n%s", err, msg)
	}
	return out
}

// sandboxExecutor is the isolated executor with program as its child.
func sandboxExecutor(t testing.TB, program string, warm int) *isolated.Executor {
	e, err := isolated.New(isolated.Options{Command: []string{program}, Warm: warm})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// BenchmarkToolCallSideBySide runs executortest.BenchToolCall in process
// and in the product's sandbox child in one run, so that their ratio is
// measured under the same load.
//
//	go test -run '^$' -bench ToolCallSideBySide -count 6 ./judge/
func BenchmarkToolCallSideBySide(b *testing.B) {
	sandbox := buildSandbox(b)
	b.Run("goja", func(b *testing.B) { executortest.BenchToolCall(b, inProcess()) })
	b.Run("sandbox", func(b *testing.B) { executortest.BenchToolCall(b, sandboxExecutor(b, sandbox, 0)) })
}
