package executortest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/kernel"
)

var bridgeCases = []testCase{
	{"Activate", testActivate},
	{"CapGetAndProvide", testGetAndProvide},
	{"CapInvokeService", testInvokeService},
	{"CapContributeReturnsID", testContributeID},
	{"CapLog", testLog},
	{"ToolCallRoundTrip", testToolRoundTrip},
	{"FunctionsAcrossPlugins", testFunctionsAcrossPlugins},
	{"ReentrantCall", testReentrantCall},
	{"ContextReachesHostCalls", testContextReachesHost},
	{"HostCallsRunConcurrently", testHostCallsConcurrent},
	{"ConcurrentCallsAreSerialized", testConcurrentCalls},
	{"UnawaitedCallFinishesWithActivation", testUnawaitedCall},
	{"DisposedFunctionsFail", testDisposal},
	{"ClosedUnitFailsCalls", testClosedUnit},
}

// Activation runs the top level, then activate(cap); declarative
// contributes are applied too, and the fiber ends active. A line after the
// export that starts with a parenthesis is a statement of its own.
func testActivate(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.hello")
	m.Contributes = map[string][]any{PointTool: {map[string]any{"name": "declared"}}}
	mustMount(t, env.K, m, `let greeting = 'hi';
export default async function activate(cap) {
	await cap.contribute('tool', { name: 'hello', handler: async (who) => greeting + ' ' + who });
}
(() => { greeting = 'hello'; })();`)
	wantState(t, env.K, "agent.hello", kernel.StateActive)
	wantEqual(t, "contributions", len(env.K.Contributions(PointTool)), 2)
	wantEqual(t, "hello(world)", call(t, tool(t, env.K, "hello"), "world"), "hello world")
}

// cap.get returns a snapshot of a declared key; cap.provide publishes a
// value the host reads back as plain data.
func testGetAndProvide(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.reader")
	m.Inject, m.Provide = []string{KeyConfig}, []string{"agent.summary"}
	mustMount(t, env.K, m, `export default async function activate(cap) {
	const cfg = await cap.get('config');
	cfg.name = 'changed locally';
	const again = await cap.get('config');
	await cap.provide('agent.summary', { name: again.name, limit: again.limit * 2, list: [1, 'two', null, true] });
}`)
	got, err := env.K.GetValue("agent.summary")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(got)
	wantEqual(t, "provided value", string(raw), `{"limit":6,"list":[1,"two",null,true],"name":"acme"}`)
}

// cap.invoke calls an Invoker service with the arguments given, and its
// errors reach the agent with their message.
func testInvokeService(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.caller")
	m.Inject = []string{KeyService}
	mustMount(t, env.K, m, toolPlugin("use", `async () => {
	const sum = await cap.invoke('svc', 'add', 1, 2, 3.5);
	const echo = await cap.invoke('svc', 'echo', 'a', { b: [1] });
	let failure = '';
	try { await cap.invoke('svc', 'fail'); } catch (e) { failure = e.message; }
	return { sum, echo, failure };
}`))
	out := call(t, tool(t, env.K, "use")).(map[string]any)
	wantEqual(t, "sum", out["sum"], 6.5)
	raw, _ := json.Marshal(out["echo"])
	wantEqual(t, "echo", string(raw), `{"args":["a",{"b":[1]}]}`)
	if !strings.Contains(out["failure"].(string), "the service failed on purpose") {
		t.Fatalf("failure = %q, want the service's message", out["failure"])
	}
}

// cap.contribute resolves to the contribution's id.
func testContributeID(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.ids")
	m.Provide = []string{"agent.ids.out"}
	mustMount(t, env.K, m, `export default async function activate(cap) {
	const id = await cap.contribute('tool', { name: 'x' });
	await cap.provide('agent.ids.out', id);
}`)
	got, _ := env.K.GetValue("agent.ids.out")
	want := env.K.Contributions(PointTool)[0].ID
	wantEqual(t, "contribution id", got, want)
}

// cap.log writes to the kernel's log, attributed to the fiber.
// Seen failing (goja) with the log line not handed to the host.
func testLog(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	mustMount(t, env.K, agent("agent.logger"), `export default async function activate(cap) {
	await cap.log('hello', { n: 1 }, [2]);
}`)
	for _, r := range env.Logs.Records() {
		if strings.Contains(r, `hello {"n":1} [2]`) && strings.Contains(r, "fiber=agent.logger") {
			return
		}
	}
	t.Fatalf("log records = %q, want one with the message and fiber=agent.logger", env.Logs.Records())
}

// A tool call goes host -> agent handler -> host service -> agent -> host.
func testToolRoundTrip(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.overdue")
	m.Inject = []string{KeyService}
	mustMount(t, env.K, m, toolPlugin("overdue", `async (input) =>
	(await cap.invoke('svc', 'echo', { id: 1, paid: true }, { id: 2, paid: false })).args.filter((i) => !i.paid && i.id > input.min)`))
	raw, _ := json.Marshal(call(t, tool(t, env.K, "overdue"), map[string]any{"min": 0}))
	wantEqual(t, "overdue", string(raw), `[{"id":2,"paid":false}]`)
	wantEqual(t, "service calls", env.Service.Calls(), 1)
}

// A function one agent plugin provides is callable by another through
// cap.invoke, and by the host as a kernel.Func.
func testFunctionsAcrossPlugins(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	lib := agent("agent.lib")
	lib.Provide = []string{"agent.math"}
	mustMount(t, env.K, lib, `let calls = 0;
export default async function activate(cap) {
	await cap.provide('agent.math', { square: (x) => { calls++; return x * x; }, count: () => calls, version: 2 });
}`)
	user := agent("agent.user")
	user.Inject = []string{"agent.math"}
	mustMount(t, env.K, user, toolPlugin("sq", `async (x) => await cap.invoke('agent.math', 'square', x) + 1`))
	wantEqual(t, "sq(7)", call(t, tool(t, env.K, "sq"), 7), 50)
	v, _ := env.K.GetValue("agent.math")
	math := v.(map[string]any)
	wantEqual(t, "version", math["version"], 2)
	wantEqual(t, "count()", call(t, math["count"].(kernel.Func)), 1)
}

// A handler that calls, through the host, a function of its own plugin is
// served while it waits: the unit does not deadlock on itself.
// Seen failing (goja) with host calls made on the unit's loop goroutine.
func testReentrantCall(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.self")
	m.Provide, m.Optional = []string{"agent.self.fns"}, []string{"agent.self.fns"}
	mustMount(t, env.K, m, `export default async function activate(cap) {
	await cap.provide('agent.self.fns', { double: (x) => 2 * x });
	await cap.contribute('tool', { name: 'quad', handler: async (x) => 2 * await cap.invoke('agent.self.fns', 'double', x) });
}`)
	wantEqual(t, "quad(5)", call(t, tool(t, env.K, "quad"), 5), 20)
}

// Host calls made on behalf of a call receive that call's context.
// Seen failing (goja) with host calls given context.Background().
func testContextReachesHost(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.ctx")
	m.Inject = []string{KeyService}
	mustMount(t, env.K, m, toolPlugin("ctx", `async () => cap.invoke('svc', 'ctx')`))
	out, err := tool(t, env.K, "ctx")(WithValue(context.Background(), "marker"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "value seen by the service", out, "marker")
}

// Host calls a handler starts together are made concurrently: two that
// each wait for the other both return.
// Seen failing (goja) with a waiting caller making all of its job's host
// calls itself, one after another, and (isolated) with the parent queueing
// the second call behind the first on a buffered channel, and with the
// parent serving a host call on the goroutine that waits for it while the
// child had another in flight.
func testHostCallsConcurrent(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.meet")
	m.Inject = []string{KeyService}
	mustMount(t, env.K, m, toolPlugin("meet", `async () => Promise.all([cap.invoke('svc', 'meet'), cap.invoke('svc', 'meet')])`))
	// A guard against hanging when the calls wait in line, not a measurement.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := tool(t, env.K, "meet")(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "meet()", out, []any{"met", "met"})
}

// Concurrent calls on one unit never run its JavaScript at the same time:
// no increment is lost, and the race detector sees no race.
// Seen failing under -race (goja) with calls started on the caller's goroutine.
func testConcurrentCalls(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	mustMount(t, env.K, agent("agent.counter"), `let n = 0;
export default async function activate(cap) {
	await cap.contribute('tool', { name: 'inc', handler: () => { n++; return n; } });
}`)
	inc := tool(t, env.K, "inc")
	const workers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				if _, err := inc(context.Background()); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wantEqual(t, "final count", call(t, inc), workers*each+1)
}

// Host calls activate started without awaiting them finish before the
// activation does, and a failure among them fails it.
// Seen failing (goja) with a job's host calls in flight ignored.
func testUnawaitedCall(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	mustMount(t, env.K, agent("agent.eager"), `export default function activate(cap) {
	cap.contribute('tool', { name: 'late' });
}`)
	wantEqual(t, "contributions", len(env.K.Contributions(PointTool)), 1)
	err := mount(context.Background(), env.K, agent("agent.sloppy"), `export default function activate(cap) {
	cap.get('undeclared');
}`)
	wantErr(t, err, "nobody awaited", "undeclared")
}

// Functions handed to the host stop working once the fiber is disposed
// (the kernel's proxies guarantee it; this checks each executor keeps to it).
func testDisposal(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	mustMount(t, env.K, agent("agent.gone"), toolPlugin("t", `() => 1`))
	fn := tool(t, env.K, "t")
	wantEqual(t, "before", call(t, fn), 1)
	if err := env.K.Disable(context.Background(), "agent.gone"); err != nil {
		t.Fatal(err)
	}
	_, err := fn(context.Background())
	if kernel.CodeOf(err) != kernel.CodeLifecycle {
		t.Fatalf("call after disable: error %v, want code %s", err, kernel.CodeLifecycle)
	}
}

// A closed unit fails every call with an error that says so.
// Seen failing (goja) with Close made a no-op.
func testClosedUnit(t *testing.T, f Factory) {
	ctx := context.Background()
	code := `export default async function activate(cap) { await cap.provide('fn', () => 1); }`
	u, err := f(t, normal).Load(ctx, kernel.Bundle{Manifest: agent("agent.closed"), Code: []byte(code), CodeHash: kernel.HashCode([]byte(code))})
	if err != nil {
		t.Fatal(err)
	}
	b := NewBridge()
	if err := u.Activate(ctx, b); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "provided", string(b.Provided["fn"]), `{"$fn":"f1"}`)
	if out, err := u.Call(ctx, "f1", json.RawMessage(`[]`)); err != nil || string(out) != "1" {
		t.Fatalf("call before close = %s, %v; want 1", out, err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = u.Call(ctx, "f1", json.RawMessage(`[]`))
	wantErr(t, err, "closed")
}
