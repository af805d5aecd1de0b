package kernel_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sms-baseline/sms/kernel"
)

// A cancelled context stops an operation before it changes anything, and a
// settle that is cancelled part way reports the cancellation. Seen failing
// with the ctx.Err() check removed from the settle loop.
func TestCancelledContext(t *testing.T) {
	k, _ := newKernel(t)
	ctx, cancel := context.WithCancel(context.Background())
	mustInstall(t, k, kernel.Plugin{Manifest: kernel.Manifest{ID: "a", Version: "1", Provide: []string{"a"}},
		Activate: func(_ context.Context, c *kernel.Context) error { cancel(); return c.Provide("a", 1) }},
		provider("b", "b", 1, "a"))
	if err := k.Settle(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("settle = %v, want context.Canceled", err)
	}
	wantState(t, k, "a", kernel.StateActive)
	wantState(t, k, "b", kernel.StateInactive)
	if err := k.Disable(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("disable on a cancelled context = %v, want context.Canceled", err)
	}
	wantState(t, k, "a", kernel.StateActive)
}
