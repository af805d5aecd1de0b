package kernel_test

import (
	"context"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// A disable holds unless it was reversible, and the log keeps which it
// was: EnableReversible undoes a reversible disable, is refused for one
// that holds (before and after a restart), a reversible disable does not
// loosen a hold, and Enable undoes either.
// Seen failing with Fold ignoring plugin/disabled's data (the reversible
// disable held after the restart), and with checkReversible always
// allowing (the held plugin was enabled).
func TestDisableHoldsUnlessReversible(t *testing.T) {
	ctx := context.Background()
	w := world{kernel.NewMemoryLog(), kernel.NewMemoryBlobs(), kerneltest.NewExecutor()}
	w.exec.Register("x", noop)
	k := w.boot(t)
	for _, id := range []string{"agent.soft", "agent.held"} {
		if err := kerneltest.Agent(ctx, k, kernel.Manifest{ID: id, Version: "1"}, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.DisableReversibly(ctx, "agent.soft", "carol"); err != nil {
		t.Fatal(err)
	}
	if err := k.Disable(ctx, "agent.held"); err != nil {
		t.Fatal(err)
	}
	if err := k.DisableReversibly(ctx, "agent.held", "carol"); err != nil {
		t.Fatal(err)
	}
	k = w.boot(t)
	if v, _ := k.Fiber("agent.soft"); v.Enabled || v.Held {
		t.Fatalf("after a restart the reversibly disabled plugin is %+v, want disabled, not held", v)
	}
	wantCode(t, k.EnableReversible(ctx, "agent.held"), kernel.CodeForbidden)
	if v, _ := k.Fiber("agent.held"); v.Enabled || !v.Held {
		t.Fatalf("after a refused enable the held plugin is %+v, want disabled and held", v)
	}
	if err := k.EnableReversible(ctx, "agent.soft"); err != nil {
		t.Fatal(err)
	}
	if err := k.Enable(ctx, "agent.held"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"agent.soft", "agent.held"} {
		if v, _ := k.Fiber(id); !v.Enabled || v.Held || v.State != kernel.StateActive {
			t.Fatalf("%s = %+v, want enabled and active", id, v)
		}
	}
}
