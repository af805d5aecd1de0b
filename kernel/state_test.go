package kernel_test

import (
	"context"
	"testing"

	"github.com/sms-baseline/sms/kernel"
)

// Generation moves with every change a view shows, and again once the
// observers of a contribution reacted; reads leave it alone. Seen failing
// with regMutex's Unlock not moving it.
func TestGenerationMovesOnChange(t *testing.T) {
	ctx := context.Background()
	k, _ := newKernel(t)
	seen := map[string]bool{}
	var observed uint64
	definer := kernel.Plugin{
		Manifest: kernel.Manifest{ID: "sys.points", Version: "1"},
		Activate: func(_ context.Context, c *kernel.Context) error {
			api := c.Kernel()
			if err := api.DefinePoint("thing", kernel.PointMeta{}); err != nil {
				return err
			}
			return api.ObservePoint("thing", kernel.Observer{
				Added:   func(x kernel.Contribution) { seen[x.ID] = true; observed = k.Generation() },
				Removed: func(x kernel.Contribution) { delete(seen, x.ID) },
			})
		},
	}
	g0 := k.Generation()
	mustInstall(t, k, definer)
	mustSettle(t, k)
	g1 := k.Generation()
	if g1 == g0 {
		t.Fatal("installing and settling left the generation alone")
	}
	_ = k.State()
	_ = k.Fibers()
	if k.Generation() != g1 {
		t.Fatal("a read moved the generation")
	}
	mustInstall(t, k, kernel.Plugin{Manifest: kernel.Manifest{ID: "sys.thing", Version: "1",
		Contributes: map[string][]any{"thing": {"x"}}}})
	mustSettle(t, k)
	if g2 := k.Generation(); g2 == g1 || g2 == observed {
		t.Fatalf("after a contribution the generation is %d (observer saw %d, before %d): it must move after the observers", g2, observed, g1)
	}
	g3 := k.Generation()
	if err := k.ForceDisable(ctx, "sys.thing"); err != nil {
		t.Fatal(err)
	}
	if k.Generation() == g3 || len(seen) != 0 {
		t.Fatalf("disabling moved nothing: generation %d, observed %v", k.Generation(), seen)
	}
}
