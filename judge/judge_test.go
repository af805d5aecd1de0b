package judge_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// A plugin that passes every gate mounts and serves; the log holds
// judge/submitted then judge/mounted.
func TestSubmitMounts(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	v := w.submit(t, manifest("agent.hello"), toolCode("hello"))
	wantVerdict(t, v, expect{judge.StatusMounted, judge.GateMount, ""})
	if view, _ := w.k.Fiber("agent.hello"); view.State != kernel.StateActive {
		t.Fatalf("fiber state = %s, want active", view.State)
	}
	want := []string{judge.EventSubmitted, judge.EventMounted}
	if got := eventTypes(t, w.k, "agent.hello"); !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
}

// Each gate refuses what it is for, in order, and the verdict names it;
// the log records the rejection with its gate.
// Seen failing with each built-in gate's Check replaced by one returning nil.
func TestGatesRejectInOrder(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	ok := toolCode("x")
	withInject := func(id string, keys ...string) kernel.Manifest {
		m := manifest(id)
		m.Inject = keys
		return m
	}
	withProvide := func(id string, keys ...string) kernel.Manifest {
		m := manifest(id)
		m.Provide = keys
		return m
	}
	withPoints := func(id string, points ...string) kernel.Manifest {
		m := manifest(id)
		m.Points = points
		return m
	}
	withPoint := func(id, point string) kernel.Manifest {
		m := manifest(id)
		m.Contributes = map[string][]any{point: {map[string]any{"name": "x"}}}
		return m
	}
	cases := []struct {
		name string
		m    kernel.Manifest
		code string
		gate string
		want string
	}{
		{"no agent prefix", manifest("tools.x"), ok, judge.GateManifest, `must start with "agent."`},
		{"invalid id", manifest("agent.X!"), ok, judge.GateManifest, "lowercase"},
		{"unknown point", withPoint("agent.p", "nowhere"), ok, judge.GateManifest, `point "nowhere" is not defined`},
		{"no code", manifest("agent.empty"), " ", judge.GateManifest, "no code"},
		{"system-only key", withInject("agent.s", "secret"), ok, judge.GateTrust, `key "secret" is system-only`},
		{"system-only point", withPoint("agent.sp", "sys-only"), ok, judge.GateTrust, `point "sys-only" is system-only`},
		{"taken key", withProvide("agent.taken", "config"), ok, judge.GateTrust, "already provided by sys.host"},
		{"import", manifest("agent.imp"), "import x from 'x';\n" + ok, judge.GateLint, "line 1: import is not allowed"},
		{"eval", manifest("agent.eval"), ok + "\neval('1');", judge.GateLint, "line 4: eval is not allowed"},
		{"Function", manifest("agent.fn"), "const f = new Function('return 1');\n" + ok, judge.GateLint, "Function"},
		{"constructor", manifest("agent.ctor"), "const f = (() => 1).constructor;\n" + ok, judge.GateLint, ".constructor"},
		{"undeclared provide", manifest("agent.prov"), `export default async function activate(cap) {
	try { await cap.provide('agent.x', 1); } catch (e) {}
}`, judge.GateLoad, `provides key "agent.x", which is not declared`},
		{"undeclared point at load", manifest("agent.pt"), `export default async function activate(cap) {
	await cap.contribute('route', {});
}`, judge.GateLoad, `point "route", which is not declared in points`},
		{"unknown declared point", withPoints("agent.up", "nowhere"), ok, judge.GateManifest, `points: point "nowhere" is not defined`},
		{"throwing activate", manifest("agent.throw"), `export default async function activate(cap) {
	throw new Error('broken');
}`, judge.GateLoad, "broken"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := w.submit(t, c.m, c.code)
			wantVerdict(t, v, expect{judge.StatusRejected, c.gate, c.want})
			if _, installed := w.k.Fiber(c.m.ID); installed {
				t.Fatalf("rejected plugin %s is installed", c.m.ID)
			}
			if got := eventTypes(t, w.k, c.m.ID); !slices.Equal(got, []string{judge.EventSubmitted, judge.EventRejected}) {
				t.Fatalf("events = %v, want submitted then rejected", got)
			}
		})
	}
}

// The load gate leaves no trace in the live kernel: what activate
// provided and contributed there appears only once, from the real mount.
// Gates see the submission as declared.
// Seen failing with the load gate run against the live kernel's bridge.
func TestLoadGateLeavesNoTrace(t *testing.T) {
	var seen []string
	gate := kernel.Plugin{
		Manifest: kernel.Manifest{ID: "sys.spy", Version: "1", Inject: []string{judge.Key}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			_, err := c.Contribute(judge.GatePoint, judge.Gate{Name: "spy", Check: func(_ context.Context, s *judge.Submission) error {
				seen = append(seen, strings.Join(s.Manifest.DeclaredPoints(), ","))
				return nil
			}})
			return err
		},
	}
	w := newWorld(t, inProcess(), judge.Options{}, gate)
	m := manifest("agent.trace")
	m.Provide = []string{"agent.trace.v"}
	v := w.submit(t, m, `export default async function activate(cap) {
	await cap.provide('agent.trace.v', 1);
	await cap.contribute('tool', { name: 'traced' });
}`)
	wantVerdict(t, v, expect{judge.StatusMounted, judge.GateMount, ""})
	if !slices.Equal(seen, []string{"tool"}) {
		t.Fatalf("the app gate saw declared points %q, want tool", seen)
	}
	if n := len(w.k.Contributions("tool")); n != 1 {
		t.Fatalf("tool contributions = %d, want 1 (the load gate's must not stay)", n)
	}
}

// Resubmitting what is mounted, or pending, changes nothing: same verdict,
// no new events.
// Seen failing with the isMounted and pending checks removed from Submit.
func TestResubmissionIsIdempotent(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	m := manifest("agent.same")
	first := w.submit(t, m, toolCode("a"))
	before := eventTypes(t, w.k, m.ID)
	again := w.submit(t, m, toolCode("a"))
	if again != first || !slices.Equal(eventTypes(t, w.k, m.ID), before) {
		t.Fatalf("resubmission = %+v with events %v, want %+v and no new events", again, eventTypes(t, w.k, m.ID), first)
	}
	net := manifest("agent.net")
	net.Scopes = []string{"net"}
	pending := w.submit(t, net, toolCode("n"))
	before = eventTypes(t, w.k, net.ID)
	again = w.submit(t, net, toolCode("n"))
	if again != pending || !slices.Equal(eventTypes(t, w.k, net.ID), before) || len(w.judge.Pending()) != 1 {
		t.Fatalf("resubmission = %+v, pending %d, want %+v, one approval, no new events", again, len(w.judge.Pending()), pending)
	}
}

func TestDecodePlugin(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{`{"manifest":{"id":"agent.a","version":"1"},"code":"x"}`, ""},
		{`{"manifest":{"id":"agent.a","version":"1","extra":1},"code":"x"}`, "unknown field"},
		{`{"manifest":{},"code":"x"} {}`, "trailing data"},
		{`{"manifest":`, "unexpected EOF"},
		{`{"code":"` + strings.Repeat("x", judge.MaxPluginBytes) + `"}`, "exceeds the limit"},
	}
	for _, c := range cases {
		_, err := judge.DecodePlugin([]byte(c.in))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("DecodePlugin(%.40s) error = %v, want %q", c.in, err, c.want)
		}
	}
}
