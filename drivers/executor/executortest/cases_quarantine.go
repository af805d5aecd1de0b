package executortest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sms-baseline/sms/kernel"
)

var quarantineCases = []testCase{
	{"StoppedPluginRestarts", testStoppedRestarts},
	{"StopsInARowQuarantine", testStopsQuarantine},
	{"CallerLeavingIsNotCounted", testCallerLeaving},
}

// mustCommit mounts an agent plugin and commits it, as the judge does once
// its invariants pass: only a committed plugin is restarted or quarantined.
func mustCommit(t testing.TB, k *kernel.Kernel, m kernel.Manifest, code string) {
	t.Helper()
	mustMount(t, k, m, code)
	if err := k.Commit(context.Background(), m.ID, kernel.HashCode([]byte(code))); err != nil {
		t.Fatalf("commit %s: %v", m.ID, err)
	}
}

const spinner = `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'spin', handler: async () => { for (;;) {} } });
	await cap.contribute('tool', { name: 'ok', handler: () => 'still here' });
}`

// A call that stops its plugin's unit (JavaScript running past its
// deadline) fails with kernel.ErrUnitStopped, and the kernel starts the
// plugin again: its other functions answer afterwards.
// Seen failing (goja) with stoppedBy leaving the plugin's stops unmarked,
// and (isolated) with the stopped kind not crossing the pipe.
func testStoppedRestarts(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, short))
	mustCommit(t, env.K, agent("agent.spins"), spinner)
	_, err := tool(t, env.K, "spin")(context.Background())
	if !errors.Is(err, kernel.ErrUnitStopped) || errors.Is(err, kernel.ErrStoppedByCaller) {
		t.Fatalf("error = %v, want one marked kernel.ErrUnitStopped, not by its caller", err)
	}
	wantEqual(t, "the restarted plugin", waitAnswer(t, env.K, "ok"), "still here")
	if v, _ := env.K.Fiber("agent.spins"); v.Quarantine != "" || !v.Enabled {
		t.Fatalf("after one stop: enabled %v, quarantine %q; want enabled, none", v.Enabled, v.Quarantine)
	}
}

// Stops in a row (kernel.DefaultQuarantineAfter, with no call answered in
// between) quarantine the plugin: disabled by a disable that holds, with
// the reason in its view and the quarantine taint. Other plugins keep
// serving. Seen failing (the plugin restarted a third time) with
// restart never counting a stop.
func testStopsQuarantine(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, short))
	mustCommit(t, env.K, agent("agent.spins"), spinner)
	mustCommit(t, env.K, agent("agent.other"), toolPlugin("other", `() => 'other'`))
	for i := range kernel.DefaultQuarantineAfter {
		before := contributionOf(env.K, "spin")
		if _, err := tool(t, env.K, "spin")(context.Background()); !errors.Is(err, kernel.ErrUnitStopped) {
			t.Fatalf("stop %d: error = %v, want kernel.ErrUnitStopped", i+1, err)
		}
		if i < kernel.DefaultQuarantineAfter-1 {
			waitRestarted(t, env.K, "agent.spins", before)
		}
	}
	v := waitQuarantined(t, env.K, "agent.spins")
	if v.Enabled || !v.Held || v.State != kernel.StateInactive {
		t.Fatalf("quarantined fiber = enabled %v, held %v, state %s; want disabled, held, inactive", v.Enabled, v.Held, v.State)
	}
	if !env.K.Tainted().Has(kernel.TaintQuarantine) {
		t.Fatalf("taint = %s, want quarantine", env.K.Tainted())
	}
	wantEqual(t, "other plugin", call(t, tool(t, env.K, "other")), "other")
}

// A caller that leaves while its call runs ends that call, and may stop
// the unit (an executor that interrupts running JavaScript for it), but
// the plugin, which would have finished well within its deadline, is not
// to blame: the kernel starts it again and never quarantines it for that,
// however often it happens. Seen failing (goja) with abandon's stop marked
// as the plugin's.
func testCallerLeaving(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	mustCommit(t, env.K, agent("agent.slow"), `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'slow', handler: () => { const end = Date.now() + 500; while (Date.now() < end) {} return 'done'; } });
	await cap.contribute('tool', { name: 'ok', handler: () => 'ok' });
}`)
	for range kernel.DefaultQuarantineAfter + 1 {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := tool(t, env.K, "slow")(ctx)
		cancel()
		if err == nil || errors.Is(err, kernel.ErrUnitStopped) && !errors.Is(err, kernel.ErrStoppedByCaller) {
			t.Fatalf("error = %v, want the caller's deadline, never a stop blamed on the plugin", err)
		}
		wantEqual(t, "the plugin after its caller left", waitAnswer(t, env.K, "ok"), "ok")
	}
	if v, _ := env.K.Fiber("agent.slow"); v.Quarantine != "" || !v.Enabled {
		t.Fatalf("fiber after its callers left = enabled %v, quarantine %q; want enabled, none", v.Enabled, v.Quarantine)
	}
}

// waitAnswer calls the tool name until it answers (the kernel restarts a
// stopped plugin in the background, contributing its tools anew).
func waitAnswer(t testing.TB, k *kernel.Kernel, name string) any {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var out any
		if out, err = findTool(k, name)(context.Background()); err == nil {
			return out
		}
	}
	t.Fatalf("tool %s never answered again: %v", name, err)
	return nil
}

// waitRestarted waits until id's spin tool is contributed anew and its
// activation has finished (a call made while it still activates would stop
// the activation), without calling anything: an answered call would end
// the stops in a row.
func waitRestarted(t testing.TB, k *kernel.Kernel, id, before string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		v, _ := k.Fiber(id)
		if now := contributionOf(k, "spin"); now != "" && now != before && v.State == kernel.StateActive {
			return
		}
	}
	t.Fatalf("the plugin of contribution %s was not started again", before)
}

// contributionOf returns the id of the tool contribution named name, or "".
func contributionOf(k *kernel.Kernel, name string) string {
	for _, c := range k.Contributions(PointTool) {
		if item, ok := c.Item.(map[string]any); ok && item["name"] == name {
			return c.ID
		}
	}
	return ""
}

// findTool is tool without failing: a func that errors while none is there.
func findTool(k *kernel.Kernel, name string) kernel.Func {
	for _, c := range k.Contributions(PointTool) {
		if item, ok := c.Item.(map[string]any); ok && item["name"] == name {
			if fn, ok := item["handler"].(kernel.Func); ok {
				return fn
			}
		}
	}
	return func(context.Context, ...any) (any, error) { return nil, errors.New("no tool " + name) }
}

// waitQuarantined waits for the kernel's background quarantine of id.
func waitQuarantined(t testing.TB, k *kernel.Kernel, id string) kernel.FiberView {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if v, _ := k.Fiber(id); v.Quarantine != "" && v.State == kernel.StateInactive {
			return v
		}
	}
	v, _ := k.Fiber(id)
	t.Fatalf("%s was not quarantined: %+v", id, v)
	return v
}
