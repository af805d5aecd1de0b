package kernel_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// ledgerService is a system service agent code invokes: "read" needs
// nothing beyond the key, "post" needs cap.post.
type ledgerService struct{}

func (ledgerService) Invoke(_ context.Context, method string, _ []any) (any, error) {
	return method + " done", nil
}

// capWorld boots a kernel on w with a key "ledger" whose "post" method
// requires cap.post, and a point "feed" that requires cap.feed; extra is
// what the key and the point require besides, this boot.
func (w world) capWorld(t *testing.T, extra ...string) *kernel.Kernel {
	t.Helper()
	k := kernel.New(kernel.Options{Log: w.log, Blobs: w.blobs, Executor: w.exec})
	sys := kernel.Plugin{
		Manifest: kernel.Manifest{ID: "sys.ledger", Version: "1", Provide: []string{"ledger"}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			if err := c.Kernel().DefineKey("ledger", kernel.KeyMeta{MinProviderTrust: kernel.TrustSystem,
				Requires: extra, Methods: map[string][]string{"post": {"cap.post"}}}); err != nil {
				return err
			}
			if err := c.Kernel().DefinePoint("feed", kernel.PointMeta{Requires: append([]string{"cap.feed"}, extra...)}); err != nil {
				return err
			}
			if len(extra) > 1 { // "late" exists only in the later boots, requiring more
				if err := c.Kernel().DefineKey("late", kernel.KeyMeta{MinProviderTrust: kernel.TrustSystem, Requires: extra}); err != nil {
					return err
				}
			}
			return c.Provide("ledger", ledgerService{})
		},
	}
	mustInstall(t, k, sys)
	_ = k.Restore(context.Background()) // a plugin that fails to activate shows it in its view
	if v, _ := k.Fiber("sys.ledger"); v.State != kernel.StateActive {
		t.Fatalf("sys.ledger = %s (%s)", v.State, v.Error)
	}
	return k
}

// invoker is an agent script that keeps its host bridge for the test.
func invoker(w world, name string, host *kernel.HostBridge) {
	w.exec.Register(name, func(_ context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		*host = h
		return nil
	})
}

// An agent plugin's capability set is derived from its declaration (its
// scopes, and what its keys and points require), shows in its view, and
// is checked on every invoke and contribute: a method or point whose
// requirement it did not declare is CAPABILITY, and a proposal whose
// declaration derives more than the judge checked is refused. Seen
// failing with checkMethod returning nil, and with Propose's check of the
// judged set removed.
func TestCapabilitiesAreDerivedAndChecked(t *testing.T) {
	ctx := context.Background()
	w := world{kernel.NewMemoryLog(), kernel.NewMemoryBlobs(), kerneltest.NewExecutor()}
	var reader, poster kernel.HostBridge
	invoker(w, "reader", &reader)
	invoker(w, "poster", &poster)
	k := w.capWorld(t, "cap.read")
	if err := kerneltest.Agent(ctx, k, kernel.Manifest{ID: "agent.reader", Version: "1", Inject: []string{"ledger"}}, "reader"); err != nil {
		t.Fatal(err)
	}
	m := kernel.Manifest{ID: "agent.poster", Version: "1", Inject: []string{"ledger"}, Scopes: []string{"cap.post"}, Points: []string{"feed"}}
	if err := kerneltest.Agent(ctx, k, m, "poster"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][]string{"agent.reader": {"cap.read"}, "agent.poster": {"cap.feed", "cap.post", "cap.read"},
		"sys.ledger": {"*"}} {
		if v, _ := k.Fiber(id); !slices.Equal(v.Capabilities, want) {
			t.Errorf("%s capabilities = %v, want %v", id, v.Capabilities, want)
		}
	}
	if _, err := reader.Invoke(ctx, "ledger", "read", nil); err != nil {
		t.Fatalf("a method with no requirement: %v", err)
	}
	_, err := reader.Invoke(ctx, "ledger", "post", nil)
	wantCode(t, err, kernel.CodeCapability)
	if !strings.Contains(err.Error(), "cap.post") {
		t.Fatalf("error %q does not name cap.post", err)
	}
	if _, err := poster.Invoke(ctx, "ledger", "post", nil); err != nil {
		t.Fatalf("a method whose capability the plugin declared: %v", err)
	}
	w.exec.Register("feeder", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		_, err := h.Contribute(ctx, "feed", kerneltest.JSON("item"))
		return err
	})
	// Declaring the point gives what it requires; a plugin that holds less
	// (an older record, here forced by the proposal's judged set) is refused.
	fm := kernel.Manifest{ID: "agent.feeder", Version: "1", Points: []string{"feed"}}
	auth, _ := k.Authorize(fm, kernel.HashCode([]byte("feeder")))
	err = k.Propose(ctx, kernel.Proposal{Manifest: fm, Code: []byte("feeder"), Auth: auth, Capabilities: []string{}})
	wantCode(t, err, kernel.CodeCapability)
}

// The set is recorded with the install: after a restart where the key
// and the point require more, the plugins mounted before are refused them
// until they are proposed again, an empty set included. Seen failing with
// mountTarget ignoring the recorded set (derived again at activation),
// (agent.feeder) with contribute's capability check removed, and
// (agent.late) with an empty set left out of the log (omitempty).
func TestRecordedCapabilitiesHoldAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	w := world{kernel.NewMemoryLog(), kernel.NewMemoryBlobs(), kerneltest.NewExecutor()}
	w.exec.Register("getter", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		_, err := h.Get(ctx, "ledger")
		return err
	})
	w.exec.Register("feeder", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		_, err := h.Contribute(ctx, "feed", kerneltest.JSON("item"))
		return err
	})
	k := w.capWorld(t, "cap.read")
	if err := kerneltest.Agent(ctx, k, kernel.Manifest{ID: "agent.getter", Version: "1", Inject: []string{"ledger"}}, "getter"); err != nil {
		t.Fatal(err)
	}
	if err := kerneltest.Agent(ctx, k, kernel.Manifest{ID: "agent.feeder", Version: "1", Points: []string{"feed"}}, "feeder"); err != nil {
		t.Fatal(err)
	}
	// agent.late's set is empty: the key it may read is not defined yet.
	w.exec.Register("late", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		if _, err := h.Get(ctx, "late"); kernel.CodeOf(err) != kernel.CodeNotFound {
			return err
		}
		return nil
	})
	if err := kerneltest.Agent(ctx, k, kernel.Manifest{ID: "agent.late", Version: "1", Optional: []string{"late"}}, "late"); err != nil {
		t.Fatal(err)
	}
	k2 := w.capWorld(t, "cap.read", "cap.secret")
	for _, id := range []string{"agent.getter", "agent.feeder", "agent.late"} {
		v, _ := k2.Fiber(id)
		if v.State != kernel.StateFailed || !strings.Contains(v.Error, "needs the capabilities") || !strings.Contains(v.Error, "cap.secret") {
			t.Fatalf("%s after the catalog requires more = %s (%s), want failed naming cap.secret", id, v.State, v.Error)
		}
	}
}

// An agent plugin cannot lend what it may do to another through a key it
// provides: a consumer of the key needs the provider's capabilities too,
// derived when it is proposed, and one proposed before the provider ran
// is refused the key. Seen failing with provide not lending the
// provider's set (the borrower held nothing and read the key).
func TestProvidedKeysLendNothing(t *testing.T) {
	ctx := context.Background()
	w := world{kernel.NewMemoryLog(), kernel.NewMemoryBlobs(), kerneltest.NewExecutor()}
	w.exec.Register("lender", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		return h.Provide(ctx, "proxy", kerneltest.JSON(map[string]any{"ok": true}))
	})
	w.exec.Register("borrower", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		_, err := h.Get(ctx, "proxy")
		return err
	})
	k := w.capWorld(t)
	early := kernel.Manifest{ID: "agent.early", Version: "1", Inject: []string{"proxy"}}
	if err := kerneltest.Agent(ctx, k, early, "borrower"); err != nil {
		t.Fatal(err) // it waits for proxy: nothing ran yet
	}
	lender := kernel.Manifest{ID: "agent.lender", Version: "1", Inject: []string{"ledger"}, Provide: []string{"proxy"}, Scopes: []string{"cap.post"}}
	if err := kerneltest.Agent(ctx, k, lender, "lender"); err != nil {
		t.Fatal(err)
	}
	if v, _ := k.Fiber("agent.early"); v.State != kernel.StateFailed || !strings.Contains(v.Error, "cap.post") {
		t.Fatalf("agent.early, proposed before the lender = %s (%s), want failed naming cap.post", v.State, v.Error)
	}
	late := kernel.Manifest{ID: "agent.late", Version: "1", Inject: []string{"proxy"}}
	if err := kerneltest.Agent(ctx, k, late, "borrower"); err != nil {
		t.Fatal(err)
	}
	if v, _ := k.Fiber("agent.late"); !slices.Contains(v.Capabilities, "cap.post") {
		t.Fatalf("agent.late capabilities = %v, want the lender's cap.post", v.Capabilities)
	}
}
