package kernel_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// providerWorld mounts agent.provider (it provides svc.a) and agent.user
// (it injects svc.a), both committed.
func providerWorld(t *testing.T) (*kernel.Kernel, *kernel.MemoryLog) {
	t.Helper()
	w := world{kernel.NewMemoryLog(), kernel.NewMemoryBlobs(), kerneltest.NewExecutor()}
	w.exec.Register("provider", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		return h.Provide(ctx, "svc.a", kerneltest.JSON(map[string]any{"ok": true}))
	})
	w.exec.Register("user", func(context.Context, kernel.HostBridge, *kerneltest.Unit) error { return nil })
	k := w.boot(t)
	ctx := context.Background()
	for _, m := range []kernel.Manifest{
		{ID: "agent.provider", Version: "1", Provide: []string{"svc.a"}},
		{ID: "agent.user", Version: "1", Inject: []string{"svc.a"}},
	} {
		if err := kerneltest.Agent(ctx, k, m, strings.TrimPrefix(m.ID, "agent.")); err != nil {
			t.Fatal(err)
		}
	}
	wantState(t, k, "agent.user", kernel.StateActive)
	return k, w.log
}

// Uninstalling a plugin another enabled plugin injects a key of is refused,
// naming who uses it, and changes nothing; force does it and taints the
// kernel. Seen failing with Uninstall's usersOf check removed.
func TestUninstallInUseNeedsForce(t *testing.T) {
	ctx := context.Background()
	k, _ := providerWorld(t)
	err := k.Uninstall(ctx, "agent.provider", false)
	wantCode(t, err, kernel.CodeConflict)
	if !strings.Contains(err.Error(), "agent.user injects svc.a") {
		t.Fatalf("error %q does not name the user and the key", err)
	}
	wantState(t, k, "agent.provider", kernel.StateActive)
	wantState(t, k, "agent.user", kernel.StateActive)
	if k.Tainted().Has(kernel.TaintForcedUninstall) {
		t.Fatal("a refused uninstall tainted the kernel")
	}
	if err := k.Uninstall(ctx, "agent.provider", true); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.Fiber("agent.provider"); ok {
		t.Fatal("agent.provider is still installed after a forced uninstall")
	}
	wantState(t, k, "agent.user", kernel.StateInactive)
	if !k.Tainted().Has(kernel.TaintForcedUninstall) {
		t.Fatalf("taint = %s, want forced_uninstall", k.Tainted())
	}
}

// A disabled user does not hold its provider: the uninstall needs no force.
func TestUninstallAfterTheUserIsDisabled(t *testing.T) {
	ctx := context.Background()
	k, _ := providerWorld(t)
	if err := k.Disable(ctx, "agent.user"); err != nil {
		t.Fatal(err)
	}
	if err := k.Uninstall(ctx, "agent.provider", false); err != nil {
		t.Fatal(err)
	}
	if !k.Tainted().Empty() {
		t.Fatalf("taint = %s, want none", k.Tainted())
	}
}

// countingLog counts whole-log reads.
type countingLog struct {
	*kernel.MemoryLog
	reads atomic.Int64
}

func (l *countingLog) Read(ctx context.Context, after int64, limit int) ([]kernel.Event, error) {
	l.reads.Add(1)
	return l.MemoryLog.Read(ctx, after, limit)
}

// Abort puts back the committed version from the plugin's own history,
// without reading the whole log. Seen failing with Abort folding the
// whole log (readFold) again.
func TestAbortReadsOnlyThePluginsHistory(t *testing.T) {
	ctx := context.Background()
	log := &countingLog{MemoryLog: kernel.NewMemoryLog()}
	exec := kerneltest.NewExecutor()
	exec.Register("v1", func(context.Context, kernel.HostBridge, *kerneltest.Unit) error { return nil })
	exec.Register("v2", func(context.Context, kernel.HostBridge, *kerneltest.Unit) error { return nil })
	k := kernel.New(kernel.Options{Log: log, Executor: exec})
	if err := k.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if err := kerneltest.Agent(ctx, k, kernel.Manifest{ID: "agent.x", Version: "1"}, "v1"); err != nil {
		t.Fatal(err)
	}
	m2 := kernel.Manifest{ID: "agent.x", Version: "2"}
	auth, err := k.Authorize(m2, kernel.HashCode([]byte("v2")))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Propose(ctx, kernel.Proposal{Manifest: m2, Code: []byte("v2"), Auth: auth}); err != nil {
		t.Fatal(err)
	}
	reads := log.reads.Load()
	version, err := k.Abort(ctx, "agent.x", kernel.HashCode([]byte("v2")), "an invariant failed")
	if err != nil || version != "1" {
		t.Fatalf("Abort = %q, %v; want version 1 put back", version, err)
	}
	if n := log.reads.Load() - reads; n != 0 {
		t.Fatalf("Abort read the whole log %d times", n)
	}
	if v, _ := k.Fiber("agent.x"); v.Version != "1" || v.State != kernel.StateActive {
		t.Fatalf("agent.x after the abort = version %s, state %s; want 1, active", v.Version, v.State)
	}
}
