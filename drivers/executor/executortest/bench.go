package executortest

import (
	"context"
	"strconv"
	"testing"

	"github.com/sms-baseline/sms/kernel"
)

// toolCode is the plugin the benchmarks mount: one tool whose handler calls
// a host service and filters its answer.
const toolCode = `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'overdue', description: 'unpaid invoices', input_schema: { type: 'object' },
		handler: async (input) => (await cap.invoke('svc', 'echo', { id: 1, paid: true }, { id: 2, paid: false })).args
			.filter((i) => !i.paid && i.id > input.min) });
}`

func toolManifest(version int) kernel.Manifest {
	return kernel.Manifest{ID: "agent.bench", Version: strconv.Itoa(version), Inject: []string{KeyService}, Points: []string{PointTool}}
}

// echoCode is a tool whose handler answers without calling the host.
const echoCode = `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'echo', description: 'echo', input_schema: { type: 'object' },
		handler: async (input) => ({ echo: input.min }) });
}`

// BenchToolCall measures one tool call through the kernel, as two
// sub-benchmarks: "invoke" is host -> agent handler -> host service ->
// agent -> host (the handler calls cap.invoke once, as tools over
// collections do); "echo" is host -> agent handler -> host.
func BenchToolCall(b *testing.B, exec kernel.Executor) {
	for _, bc := range []struct{ name, code, tool string }{{"invoke", toolCode, "overdue"}, {"echo", echoCode, "echo"}} {
		b.Run(bc.name, func(b *testing.B) {
			env := NewEnv(b, exec)
			mustMount(b, env.K, toolManifest(1), bc.code)
			fn := tool(b, env.K, bc.tool)
			ctx := context.Background()
			input := map[string]any{"min": 0}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fn(ctx, input); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchMount measures mounting an agent plugin: authorize, propose, load,
// activate, and undo of the version it replaces.
func BenchMount(b *testing.B, exec kernel.Executor) {
	env := NewEnv(b, exec)
	ctx := context.Background()
	version := 0
	b.ReportAllocs()
	for b.Loop() {
		version++
		if err := mount(ctx, env.K, toolManifest(version), toolCode); err != nil {
			b.Fatal(err)
		}
	}
	if err := env.K.Uninstall(ctx, "agent.bench", false); err != nil {
		b.Fatal(err)
	}
}
