package kernel_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// systemOnly defines a key and a point only system fibers may use, and
// installs a system provider for the key.
func systemOnly(t *testing.T, k *kernel.Kernel) {
	t.Helper()
	sys := kernel.KeyMeta{MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem}
	if err := k.DefineKey("judge", sys); err != nil {
		t.Fatal(err)
	}
	if err := k.DefinePoint("gate", kernel.PointMeta{MinContributorTrust: kernel.TrustSystem}); err != nil {
		t.Fatal(err)
	}
	mustInstall(t, k, provider("sys.judge", "judge", "the judge"))
	mustSettle(t, k)
}

// Trust is checked on every get, provide and contribute, and an attempt
// taints the kernel. Seen failing with checkTrust returning nil.
func TestTrustCheckedOnEveryCall(t *testing.T) {
	cases := []struct {
		name   string
		m      kernel.Manifest
		script kerneltest.Script
	}{
		{"get", kernel.Manifest{Optional: []string{"judge"}}, func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
			_, err := h.Get(ctx, "judge")
			return err
		}},
		{"invoke", kernel.Manifest{Optional: []string{"judge"}}, func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
			_, err := h.Invoke(ctx, "judge", "submit", nil)
			return err
		}},
		{"provide", kernel.Manifest{Provide: []string{"judge"}}, func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
			return h.Provide(ctx, "judge", kerneltest.JSON("fake"))
		}},
		{"contribute", kernel.Manifest{Points: []string{"gate"}}, func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
			_, err := h.Contribute(ctx, "gate", kerneltest.JSON(map[string]any{"name": "let-me-in"}))
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, exec := newKernel(t)
			systemOnly(t, k)
			exec.Register(tc.name, tc.script)
			m := tc.m
			m.ID, m.Version = "agent.x", "1"
			wantCode(t, kerneltest.Agent(context.Background(), k, m, tc.name), kernel.CodeTrust)
			wantState(t, k, "agent.x", kernel.StateFailed)
			if !k.Tainted().Has(kernel.TaintTrustEscalation) {
				t.Fatalf("taint = %s, want trust_escalation", k.Tainted())
			}
		})
	}
}

// System fibers pass the same checks; only the agent tier is refused.
func TestSystemFiberPassesTrust(t *testing.T) {
	k, _ := newKernel(t)
	systemOnly(t, k)
	mustInstall(t, k, kernel.Plugin{Manifest: kernel.Manifest{ID: "sys.gate", Version: "1", Inject: []string{"judge"}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			if _, err := c.Get("judge"); err != nil {
				return err
			}
			_, err := c.Contribute("gate", "mine")
			return err
		}})
	mustSettle(t, k)
	wantState(t, k, "sys.gate", kernel.StateActive)
	if !k.Tainted().Empty() {
		t.Fatalf("taint = %s, want none", k.Tainted())
	}
}

// Agent code gets only the host bridge, which cannot mint authorizations or
// reach the kernel: its method set is exactly the five cap calls.
func TestHostBridgeHasNoKernelAccess(t *testing.T) {
	typ := reflect.TypeFor[kernel.HostBridge]()
	var names []string
	for i := range typ.NumMethod() {
		names = append(names, typ.Method(i).Name)
	}
	if want := []string{"Contribute", "Get", "Invoke", "Log", "Provide"}; !equal(names, want) {
		t.Fatalf("HostBridge methods = %v, want %v", names, want)
	}
}
