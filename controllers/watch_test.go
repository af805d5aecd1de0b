package controllers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/controllers"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// A kernel that accepts connections and never answers delays nobody: the
// other tenant's events still wake its Plugin at once, and the hung one is
// reported down after the idle limit, so calls to it fail fast. Seen
// failing with the idle limit started only after the kernel's headers
// (the hung tenant never went down).
func TestHungKernelDelaysNoOtherTenant(t *testing.T) {
	testenv.Need(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	world := newWorld(t) // its operator serves the webhooks; its tenants do not exist
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: world.ns}}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns.Name: {}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := controllers.AddIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	mgr.GetCache().WaitForCacheSync(ctx)
	for _, tenant := range []string{"live", "hung"} {
		code := "export default async function activate(cap) {}"
		p := &smsv1.Plugin{ObjectMeta: metav1.ObjectMeta{Name: tenant + "-p", Namespace: ns.Name},
			Spec: smsv1.PluginSpec{TenantRef: corev1.LocalObjectReference{Name: tenant}, ID: "agent.p", Version: "1", Code: &code}}
		if err := env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}

	hang := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer hung.Close()
	defer close(hang)
	live := httptest.NewServer(baselinetest.New(t, baselinetest.Options{Approvals: true, AdminToken: "t"}))
	defer live.Close()
	// Stop the watchers first: their open streams keep Close waiting.
	defer cancel()

	w := controllers.NewWatchers(&controllers.Deps{Client: mgr.GetClient()})
	// Three keepalives (the shortest period, 1 s) per idle limit: one that
	// arrives late on a busy machine must not end the live stream.
	w.Idle = 3 * time.Second
	go func() { _ = w.Start(ctx) }()
	tenant := func(name string) *smsv1.Tenant {
		return &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name}}
	}
	w.Ensure(tenant("hung"), hung.URL, "t")
	w.Ensure(tenant("live"), live.URL, "t")

	started := time.Now()
	if _, err := adminv1.New(live.URL, "t", nil).Submit(ctx,
		adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.p", Version: "1"}, Code: "export default async function activate(cap) {}"}, ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for woke := false; !woke; {
		select {
		case e := <-w.PluginWakes():
			if e.Object.Name == "hung-p" {
				t.Fatal("the hung kernel woke its Plugin")
			}
			woke = e.Object.Name == "live-p"
		case <-deadline:
			t.Fatal("the live tenant's Plugin was not woken within 5 s")
		}
	}
	t.Logf("live Plugin woken %s after the submission", time.Since(started))
	for w.Down(types.NamespacedName{Namespace: ns.Name, Name: "hung"}) == nil {
		if time.Since(started) > 10*time.Second {
			t.Fatal("the hung kernel is not reported down")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := w.Down(types.NamespacedName{Namespace: ns.Name, Name: "live"}); err != nil {
		t.Fatalf("the live kernel is reported down: %v", err)
	}
}
