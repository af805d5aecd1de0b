package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
)

// Taint flags are sticky and attached to every later error and the state
// view. Seen failing with errf not copying k.taint.
func TestTaintStickyAndAttached(t *testing.T) {
	ctx := context.Background()
	k, _ := newKernel(t)
	if !k.Tainted().Empty() {
		t.Fatalf("a new kernel is tainted: %s", k.Tainted())
	}
	k.Taint(kernel.TaintRollback)
	k.Taint(kernel.TaintAutoApproval)
	k.Taint(kernel.TaintRollback)
	err := k.Enable(ctx, "missing")
	var e *kernel.Error
	if !errors.As(err, &e) || !e.Taint.Has(kernel.TaintRollback) || !strings.Contains(err.Error(), "taint: rollback,auto_approval") {
		t.Fatalf("error = %v, want the taint attached", err)
	}
	raw, _ := json.Marshal(k.State())
	if !strings.Contains(string(raw), `"taint":["rollback","auto_approval"]`) {
		t.Fatalf("state = %s, want the taint listed", raw)
	}
}

// An undo that fails taints the kernel and the other undos still run.
// Seen failing with the Taint call removed from undo.
func TestUndoFailureTaints(t *testing.T) {
	k, _ := newKernel(t)
	mustInstall(t, k, kernel.Plugin{Manifest: kernel.Manifest{ID: "p", Version: "1", Provide: []string{"svc"}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			if err := c.Provide("svc", 1); err != nil {
				return err
			}
			return c.OnUndo("broken", func() error { panic("undo exploded") })
		}})
	mustSettle(t, k)
	if err := k.ForceDisable(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	if !k.Tainted().Has(kernel.TaintUndoFailed) || k.Has("svc") {
		t.Fatalf("taint = %s, svc present = %v; want undo_failed and svc withdrawn", k.Tainted(), k.Has("svc"))
	}
}

func TestTrustText(t *testing.T) {
	var tr kernel.Trust
	if err := tr.UnmarshalText([]byte("system")); err != nil || tr != kernel.TrustSystem {
		t.Fatalf("unmarshal system = %v, %v", tr, err)
	}
	if err := tr.UnmarshalText([]byte("root")); err == nil {
		t.Fatal("unknown tier accepted")
	}
	if _, err := kernel.Trust(7).MarshalText(); err == nil {
		t.Fatal("unknown tier marshalled")
	}
}
