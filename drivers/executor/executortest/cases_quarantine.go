package executortest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sms-baseline/sms/kernel"
)

var quarantineCases = []testCase{
	{"StoppedPluginIsQuarantined", testStoppedIsQuarantined},
	{"CallerLeavingQuarantinesNothing", testCallerLeaving},
}

// mustCommit mounts an agent plugin and commits it, as the judge does once
// its invariants pass: only a committed plugin is quarantined.
func mustCommit(t testing.TB, k *kernel.Kernel, m kernel.Manifest, code string) {
	t.Helper()
	mustMount(t, k, m, code)
	if err := k.Commit(context.Background(), m.ID, kernel.HashCode([]byte(code))); err != nil {
		t.Fatalf("commit %s: %v", m.ID, err)
	}
}

// A call that stops its plugin's unit (here, JavaScript running past its
// deadline) fails with kernel.ErrUnitStopped, and the kernel quarantines
// the plugin: disabled by a disable that holds, with the reason in its
// view and the quarantine taint. Other plugins keep serving.
// Seen failing (goja) with the deadline's error left unmarked in overran,
// and (isolated) with the stopped kind not crossing the pipe.
func testStoppedIsQuarantined(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, short))
	mustCommit(t, env.K, agent("agent.spins"), toolPlugin("spin", `async () => { for (;;) {} }`))
	mustCommit(t, env.K, agent("agent.other"), toolPlugin("other", `() => 'other'`))
	_, err := tool(t, env.K, "spin")(context.Background())
	if !errors.Is(err, kernel.ErrUnitStopped) {
		t.Fatalf("error = %v, want one marked kernel.ErrUnitStopped", err)
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

// A caller that leaves while its call runs ends that call, but the
// plugin is not to blame: it is not quarantined.
// Seen failing (goja) with stoppedBy marking every stop.
func testCallerLeaving(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	mustCommit(t, env.K, agent("agent.slow"), toolPlugin("slow", `() => { for (;;) {} }`))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := tool(t, env.K, "slow")(ctx)
	if err == nil || errors.Is(err, kernel.ErrUnitStopped) {
		t.Fatalf("error = %v, want the caller's deadline, not a stopped unit", err)
	}
	// The unit may be unable to run again, but the plugin is not to blame.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if _, err := tool(t, env.K, "slow")(ctx2); errors.Is(err, kernel.ErrUnitStopped) {
		t.Fatalf("the next call's error = %v, marked kernel.ErrUnitStopped", err)
	}
	if v, _ := env.K.Fiber("agent.slow"); v.Quarantine != "" || !v.Enabled {
		t.Fatalf("fiber after its caller left = enabled %v, quarantine %q; want enabled, none", v.Enabled, v.Quarantine)
	}
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
