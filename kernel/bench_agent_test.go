package kernel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// BenchmarkSettleAgentChain enables the root of a chain of n agent
// plugins, where plugin i reads the key plugin i-1 provides and provides
// its own; each key requires a capability, so every activation's get and
// provide runs the capability checks. Disabling runs off the clock.
func BenchmarkSettleAgentChain(b *testing.B) {
	ctx := context.Background()
	for _, n := range chainSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			k := agentChain(b, n)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if err := k.Disable(ctx, "agent.p0"); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := k.Enable(ctx, "agent.p0"); err != nil {
					b.Fatal(err)
				}
			}
			if v, _ := k.Fiber(fmt.Sprintf("agent.p%d", n-1)); v.State != kernel.StateActive {
				b.Fatalf("chain end is %s, want active", v.State)
			}
		})
	}
}

// agentChain mounts n agent plugins, each reading its predecessor's key.
func agentChain(b *testing.B, n int) *kernel.Kernel {
	b.Helper()
	ctx := context.Background()
	exec := kerneltest.NewExecutor()
	k := kernel.New(kernel.Options{Executor: exec})
	for i := range n {
		if err := k.DefineKey(fmt.Sprintf("k%d", i), kernel.KeyMeta{Requires: []string{"cap.chain"}}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		key, code := fmt.Sprintf("k%d", i), fmt.Sprintf("p%d", i)
		prev := fmt.Sprintf("k%d", i-1)
		exec.Register(code, func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
			if i > 0 {
				if _, err := h.Get(ctx, prev); err != nil {
					return err
				}
			}
			return h.Provide(ctx, key, kerneltest.JSON(i))
		})
		m := kernel.Manifest{ID: "agent." + code, Version: "1", Provide: []string{key}}
		if i > 0 {
			m.Inject = []string{prev}
		}
		if err := kerneltest.Agent(ctx, k, m, code); err != nil {
			b.Fatal(err)
		}
	}
	return k
}
