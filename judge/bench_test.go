package judge_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// BenchmarkJudgeSubmit measures a full submission that mounts: every gate
// (the load gate activates the plugin in a throwaway unit), the mount, the
// invariants, and the undo of the version it replaces.
func BenchmarkJudgeSubmit(b *testing.B) {
	executors := []struct {
		name string
		new  func(testing.TB) kernel.Executor
	}{
		{"goja", func(testing.TB) kernel.Executor { return inProcess() }},
		{"isolated", inChild},
	}
	code := `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'overdue', description: 'unpaid invoices', input_schema: { type: 'object' },
		handler: async (input) => (await cap.invoke('svc', 'echo', input)).args });
}`
	for _, e := range executors {
		b.Run(e.name, func(b *testing.B) {
			w := newWorld(b, e.new(b), judge.Options{})
			ctx := context.Background()
			version := 0
			b.ReportAllocs()
			for b.Loop() {
				version++
				m := kernel.Manifest{ID: "agent.bench", Version: strconv.Itoa(version), Inject: []string{"svc"}, Points: []string{"tool"}}
				v, err := w.judge.Submit(ctx, m, code, "bench")
				if err != nil || v.Status != judge.StatusMounted {
					b.Fatalf("submit = %+v, %v; want mounted", v, err)
				}
			}
			if err := w.k.Uninstall(ctx, "agent.bench", false); err != nil {
				b.Fatal(err)
			}
		})
	}
}
