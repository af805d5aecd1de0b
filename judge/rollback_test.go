package judge_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// invariants is a system plugin contributing an invariant: no tool may be
// named "forbidden".
var invariants = kernel.Plugin{
	Manifest: kernel.Manifest{ID: "sys.rules", Version: "1", Inject: []string{judge.Key}},
	Activate: func(_ context.Context, c *kernel.Context) error {
		_, err := c.Contribute(judge.InvariantPoint, judge.Invariant{Name: "no-forbidden-tool",
			Check: func(_ context.Context, k judge.KernelView) error {
				for _, c := range k.Contributions("tool") {
					if item, _ := c.Item.(map[string]any); item["name"] == "forbidden" {
						return errors.New("a tool named forbidden is mounted")
					}
				}
				return nil
			}})
		return err
	},
}

func forbiddenTool() string {
	return `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'forbidden', handler: () => 'no' });
}`
}

// A new plugin that breaks an invariant is uninstalled, the verdict names
// the invariant, and the kernel is tainted.
// Seen failing with checkInvariants ignoring contributed invariants.
func TestInvariantViolationUninstallsANewPlugin(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{}, invariants)
	v := w.submit(t, manifest("agent.bad"), forbiddenTool())
	wantVerdict(t, v, expect{judge.StatusRejected, "invariant:no-forbidden-tool", "a tool named forbidden"})
	if !v.RolledBack || v.Restored != "" {
		t.Fatalf("verdict = %+v, want rolled back with nothing restored", v)
	}
	if _, installed := w.k.Fiber("agent.bad"); installed {
		t.Fatal("the violating plugin is still installed")
	}
	if !w.k.Tainted().Has(kernel.TaintRollback) {
		t.Fatalf("taint = %s, want rollback", w.k.Tainted())
	}
	want := []string{judge.EventSubmitted, judge.EventRolledBack}
	if got := eventTypes(t, w.k, "agent.bad"); !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
}

// An update that breaks an invariant is replaced by the previous version,
// from the log and the blob store.
// Seen failing with restorePrevious always uninstalling.
func TestInvariantViolationRestoresThePreviousVersion(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{}, invariants)
	v1 := manifest("agent.upd")
	wantVerdict(t, w.submit(t, v1, toolCode("one")), expect{judge.StatusMounted, judge.GateMount, ""})
	v2 := manifest("agent.upd")
	v2.Version = "2"
	v := w.submit(t, v2, forbiddenTool())
	wantVerdict(t, v, expect{judge.StatusRejected, "invariant:no-forbidden-tool", ""})
	if v.Restored != "1" {
		t.Fatalf("restored %q, want version 1", v.Restored)
	}
	view, _ := w.k.Fiber("agent.upd")
	if view.Version != "1" || view.State != kernel.StateActive || view.CodeHash != kernel.HashCode([]byte(toolCode("one"))) {
		t.Fatalf("fiber = %+v, want version 1 active with its code", view)
	}
	item := w.k.Contributions("tool")[0].Item.(map[string]any)
	if out, err := item["handler"].(kernel.Func)(context.Background()); err != nil || out != "one" {
		t.Fatalf("restored tool = %v, %v; want one", out, err)
	}
}

// A plugin that passes the load gate but fails to activate for real is
// rolled back too.
func TestActivationFailureRollsBack(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	m := manifest("agent.real")
	m.Inject = []string{"config"}
	v := w.submit(t, m, `export default async function activate(cap) {
	const cfg = await cap.get('config');
	if (cfg !== null) throw new Error('fails only with the real config');
}`)
	wantVerdict(t, v, expect{judge.StatusRejected, judge.GateMount, "fails only with the real config"})
	if _, installed := w.k.Fiber(m.ID); installed || !v.RolledBack {
		t.Fatalf("verdict %+v; the plugin must be rolled back and uninstalled", v)
	}
}

// With the isolated executor, a plugin that exhausts memory while it
// activates is refused at the load gate: its child dies, the judge fails
// closed, and the kernel keeps judging and serving.
func TestMemoryBombIsRefusedAtTheLoadGate(t *testing.T) {
	w := newWorld(t, inChild(t), judge.Options{})
	v := w.submit(t, manifest("agent.bomb"), `export default async function activate(cap) {
	const s = 'x'.repeat(2 ** 30);
	await cap.log(s.length);
}`)
	wantVerdict(t, v, expect{judge.StatusRejected, judge.GateLoad, "sandbox process exited"})
	wantVerdict(t, w.submit(t, manifest("agent.fine"), toolCode("fine")), expect{judge.StatusMounted, judge.GateMount, ""})
}
