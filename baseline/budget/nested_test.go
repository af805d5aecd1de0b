package budget_test

import (
	"context"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline/budget"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// nestedKernel is a kernel metered by m where agent.b provides the key
// "svc" with a method that takes 30 ms, and agent.a's tool takes 5 ms and
// calls it; agent.a's activation takes 20 ms.
func nestedKernel(t *testing.T, m *budget.Meter) *kernel.Kernel {
	t.Helper()
	ctx := context.Background()
	exec := kerneltest.NewExecutor()
	k := kernel.New(kernel.Options{Name: "test", Executor: exec, Meter: m})
	t.Cleanup(k.Close)
	svc := kernel.Plugin{Manifest: kernel.Manifest{ID: "sys.svc", Version: "1"},
		Activate: func(_ context.Context, c *kernel.Context) error {
			if err := c.Kernel().DefineKey("svc", kernel.KeyMeta{}); err != nil {
				return err
			}
			return c.Kernel().DefinePoint("tool", kernel.PointMeta{})
		}}
	if err := k.Install(svc); err != nil {
		t.Fatal(err)
	}
	if err := k.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	exec.Register("b", func(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
		slow := u.Func("slow", func(context.Context, []any) (any, error) { time.Sleep(30 * time.Millisecond); return "slow", nil })
		return h.Provide(ctx, "svc", kerneltest.JSON(map[string]any{"slow": slow}))
	})
	exec.Register("a", func(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
		time.Sleep(20 * time.Millisecond)
		tool := u.Func("tool", func(ctx context.Context, _ []any) (any, error) {
			time.Sleep(5 * time.Millisecond)
			_, err := h.Invoke(ctx, "svc", "slow", kerneltest.JSON([]any{}))
			return "done", err
		})
		_, err := h.Contribute(ctx, "tool", kerneltest.JSON(map[string]any{"handler": tool}))
		return err
	})
	for _, p := range []struct {
		id, code string
		m        kernel.Manifest
	}{
		{"agent.b", "b", kernel.Manifest{ID: "agent.b", Version: "1", Provide: []string{"svc"}}},
		{"agent.a", "a", kernel.Manifest{ID: "agent.a", Version: "1", Inject: []string{"svc"}, Points: []string{"tool"}}},
	} {
		if err := kerneltest.Agent(kernel.WithRequester(ctx, "sam"), k, p.m, p.code); err != nil {
			t.Fatalf("%s: %v", p.id, err)
		}
	}
	return k
}

func callTool(t *testing.T, k *kernel.Kernel) error {
	t.Helper()
	c := k.Contributions("tool")
	if len(c) != 1 {
		t.Fatalf("%d tools, want 1", len(c))
	}
	_, err := c[0].Item.(map[string]any)["handler"].(kernel.Func)(context.Background())
	return err
}

// A call into agent.b made during agent.a's call is inside agent.a's wall
// time: it counts for agent.b, and the user and the tenant pay it once.
// An activation's time counts too. Seen failing with Spent charging the
// whole chain for the nested call (the tenant paid agent.b's 30 ms
// twice), and with the activation's Spent removed (agent.a's 20 ms of
// activation went uncounted).
func TestNestedCallsCountOnce(t *testing.T) {
	m := budget.NewMeter(budget.Config{}, nil)
	k := nestedKernel(t, m)
	if err := callTool(t, k); err != nil {
		t.Fatal(err)
	}
	r := m.Report()
	a, b, tenant := r.Plugins["agent.a"].WallMillis, r.Plugins["agent.b"].WallMillis, r.Tenant.WallMillis
	if a < 55 || b < 30 {
		t.Fatalf("agent.a %d ms, agent.b %d ms; want at least 55 (20 activating, 35 calling) and 30", a, b)
	}
	if tenant > a+b-25 || r.Users["sam"].WallMillis != tenant {
		t.Fatalf("tenant %d ms, sam %d ms, with agent.a %d and agent.b %d: want agent.b's nested 30 ms counted once", tenant, r.Users["sam"].WallMillis, a, b)
	}
}

// A plugin over budget activates all the same (its service calls during
// activation are not refused), so it is never quarantined for its budget,
// and its calls are refused. Seen failing with Invoke admitting calls
// during activation (agent.a failed to activate).
func TestOverBudgetPluginStillActivates(t *testing.T) {
	m := budget.NewMeter(budget.Config{Limits: contracts.BudgetLimits{Plugin: contracts.Usage{WallMillis: 1}}}, nil)
	m.Spent(context.Background(), kernel.Payer{Plugin: "agent.a"}, kernel.Use{Wall: time.Second})
	exec := kerneltest.NewExecutor()
	k := kernel.New(kernel.Options{Name: "test", Executor: exec, Meter: m})
	t.Cleanup(k.Close)
	svc := kernel.Plugin{Manifest: kernel.Manifest{ID: "sys.svc", Version: "1", Provide: []string{"svc"}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			if err := c.Kernel().DefineKey("svc", kernel.KeyMeta{}); err != nil {
				return err
			}
			return c.Provide("svc", map[string]any{"ping": kernel.Func(func(context.Context, ...any) (any, error) { return "pong", nil })})
		}}
	if err := k.Install(svc); err != nil {
		t.Fatal(err)
	}
	if err := k.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var host kernel.HostBridge
	exec.Register("a", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		host = h
		_, err := h.Invoke(ctx, "svc", "ping", kerneltest.JSON([]any{}))
		return err
	})
	if err := kerneltest.Agent(context.Background(), k, kernel.Manifest{ID: "agent.a", Version: "1", Inject: []string{"svc"}}, "a"); err != nil {
		t.Fatalf("agent.a over budget failed to activate: %v", err)
	}
	if v, _ := k.Fiber("agent.a"); v.State != kernel.StateActive {
		t.Fatalf("agent.a = %s, want active", v.State)
	}
	_, err := host.Invoke(context.Background(), "svc", "ping", kerneltest.JSON([]any{}))
	if kernel.CodeOf(err) != kernel.CodeBudget {
		t.Fatalf("agent.a's call once active = %v, want BUDGET", err)
	}
}
