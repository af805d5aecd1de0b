package kernel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sms-baseline/sms/kernel"
)

var chainSizes = []int{10, 100, 1000}

// BenchmarkSettleChain installs a chain where fiber i injects the key fiber
// i-1 provides, then settles until every fiber is active.
func BenchmarkSettleChain(b *testing.B) {
	for _, n := range chainSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			plugins := chain(n, nil)
			for b.Loop() {
				k := kernel.New(kernel.Options{})
				for _, p := range plugins {
					if err := k.Install(p); err != nil {
						b.Fatal(err)
					}
				}
				if err := k.Settle(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDisposeChain disables the root of an active chain, which
// deactivates every fiber, consumers first. Re-enabling runs off the clock.
func BenchmarkDisposeChain(b *testing.B) {
	ctx := context.Background()
	for _, n := range chainSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			k := kernel.New(kernel.Options{})
			for _, p := range chain(n, nil) {
				if err := k.Install(p); err != nil {
					b.Fatal(err)
				}
			}
			if err := k.Settle(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := k.ForceDisable(ctx, "p0"); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := k.Enable(ctx, "p0"); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if v, _ := k.Fiber(fmt.Sprintf("p%d", n-1)); v.State != kernel.StateActive {
				b.Fatalf("chain end is %s after re-enable, want active", v.State)
			}
		})
	}
}
