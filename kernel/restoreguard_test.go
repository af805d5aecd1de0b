package kernel_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// forgeInstall appends a plugin/installed for id the way a hand edit of
// the log would (no staging, no commit) and stores its code.
func forgeInstall(t *testing.T, w world, id, code string) {
	t.Helper()
	ctx := context.Background()
	hash, err := w.blobs.Put(ctx, []byte(code))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"manifest": kernel.Manifest{ID: id, Version: "1", Points: []string{"tool"}},
		"codeHash": hash, "trust": "agent"})
	if _, err := w.log.Append(ctx, kernel.Event{Type: kernel.EventPluginInstalled, Plugin: id, Data: data}); err != nil {
		t.Fatal(err)
	}
}

// vouch is a restore guard that vouches for the uncommitted installs it names.
type vouch map[string]bool

func (v vouch) VetRestore([]kernel.Event, map[string]kernel.Target) kernel.RestoreVetting {
	return kernel.RestoreVetting{Committed: v}
}

// Restore mounts only committed installs: a plugin/installed written by
// hand (no staging, no plugin/mounted) is left out, and the kernel says so
// with the restore_refused taint and a plugin/restore_refused event, while
// committed plugins restore. A restore guard may vouch for an install
// without a commit (a log written before commits existed).
// Seen failing without the fix: the forged plugin was restored and active.
func TestRestoreRefusesUncommittedInstalls(t *testing.T) {
	ctx := context.Background()
	w := world{kernel.NewMemoryLog(), kernel.NewMemoryBlobs(), kerneltest.NewExecutor()}
	w.exec.Register("tool", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		_, err := h.Contribute(ctx, "tool", kerneltest.JSON("t"))
		return err
	})
	k := w.boot(t)
	if err := kerneltest.Agent(ctx, k, kernel.Manifest{ID: "agent.real", Version: "1", Points: []string{"tool"}}, "tool"); err != nil {
		t.Fatal(err)
	}
	forgeInstall(t, w, "agent.forged", "tool")
	k = w.boot(t)
	if _, ok := k.Fiber("agent.forged"); ok {
		t.Fatal("the forged install was restored")
	}
	if v, ok := k.Fiber("agent.real"); !ok || v.State != kernel.StateActive {
		t.Fatalf("the committed plugin = %+v (found %v), want active", v, ok)
	}
	if !k.Tainted().Has(kernel.TaintRestoreRefused) || !hasEvent(t, w.log, kernel.EventPluginRestoreRefused, "agent.forged") {
		t.Fatalf("taint %s, want restore_refused and a plugin/restore_refused event", k.Tainted())
	}
	k2 := kernel.New(kernel.Options{Log: w.log, Blobs: w.blobs, Executor: w.exec})
	if err := k2.DefinePoint("tool", kernel.PointMeta{}); err != nil {
		t.Fatal(err)
	}
	mustInstall(t, k2, provider("sys.db", "db", "handle"), provider("sys.extra", "extra", 1),
		kernel.Plugin{Manifest: kernel.Manifest{ID: "sys.guard", Version: "1"}, RestoreGuard: vouch{"agent.forged": true}})
	if err := k2.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if v, ok := k2.Fiber("agent.forged"); !ok || v.State != kernel.StateActive {
		t.Fatalf("an install a guard vouches for = %+v (found %v), want active", v, ok)
	}
}
