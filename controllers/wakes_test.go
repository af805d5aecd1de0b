package controllers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/controllers"
)

// A burst of Plugins from git costs their kernel few reads of its whole
// state (each decodes every plugin the kernel holds): the mirror is not
// woken by the creation, events or status writes of Plugins it leaves
// alone, and kernel events wake the Tenant at most once per counts
// interval, the last wake bringing the counts up to date. Seen failing
// (38 to 111 reads for 20 mounts) with the mirror's Plugin predicate, its
// skip of events of Plugins from git, or the Tenant's coalescing removed,
// and (counts never arriving) with the wake at the interval's end removed.
func TestBurstOfMountsCostsFewStateReads(t *testing.T) {
	counter := &countingTransport{next: http.DefaultTransport}
	http.DefaultTransport = counter // the operator's kernel client uses it
	t.Cleanup(func() { http.DefaultTransport = counter.next })

	w := newWorldPolling(t, controllers.DefaultPoll)
	tenant := w.tenant("acme", smsv1.TenantJudge{})
	counter.count(t, tenant.Status.AdminEndpoint)
	time.Sleep(time.Second) // let becoming Ready settle
	counter.take()

	const n = 20
	start := time.Now()
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		w.plugin(w.admin, name, "agent."+name, quietCode)
	}
	for i := range n {
		w.waitPlugin(fmt.Sprintf("p%02d", i), map[string]bool{smsv1.ConditionReady: true})
	}
	// The Tenant's counts arrive with the wake that ends the interval.
	w.eventually("the tenant counts every mount", func() error {
		var cur smsv1.Tenant
		if err := w.admin.Get(context.Background(), client.ObjectKeyFromObject(tenant), &cur); err != nil {
			return err
		}
		if c := cur.Status.Plugins; c == nil || c.Mounted != n {
			return fmt.Errorf("status.plugins = %+v, want %d mounted", c, n)
		}
		return nil
	})
	elapsed := time.Since(start)
	reads := 0
	for _, r := range counter.take() {
		if r == "GET /api/state" {
			reads++
		}
	}
	// The Tenant reads about once per interval (a wake, and the requeue
	// that writes counts held back), with room for a resync; each change
	// below removed made it 38 to 111 reads here.
	limit := 2*int(elapsed/controllers.CountsInterval) + 6
	t.Logf("%d state reads for %d mounts in %s (limit %d)", reads, n, elapsed, limit)
	if reads > limit {
		t.Fatalf("%d reads of the kernel's state for %d mounts in %s, want at most %d", reads, n, elapsed, limit)
	}
}

// A new Plugin's first submission reads nothing more from the API server:
// the read of the live Plugin that guards against submitting twice from a
// stale cache is needed only once this process has patched the Plugin's
// status, or for a Plugin created before this process began to lead
// (TestRestartConverges keeps that guard), so no Plugin created later is
// read before its first status patch. Seen failing (a read before the first
// patch of every Plugin) with the live read made before every submission.
func TestFirstSubmissionReadsNoPlugin(t *testing.T) {
	var mu sync.Mutex
	patched := map[string]bool{}
	var early []string
	w := newWorldWrapped(t, controllers.DefaultPoll, func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			_, rest, _ := strings.Cut(r.URL.Path, "/plugins/")
			name, sub, _ := strings.Cut(rest, "/")
			mu.Lock()
			switch {
			case name == "" || r.URL.Query().Get("watch") == "true":
			case r.Method == http.MethodPatch && sub == "status":
				patched[name] = true
			case r.Method == http.MethodGet && sub == "" && !patched[name]:
				early = append(early, name)
			}
			mu.Unlock()
			return next.RoundTrip(r)
		})
	})
	w.tenant("acme", smsv1.TenantJudge{})
	// Plugins created within a second and the skew allowance of the
	// operator's start are read: an earlier leader may have written them.
	time.Sleep(controllers.SkewAllowance + time.Second)
	for i := range 5 {
		name := fmt.Sprintf("p%02d", i)
		w.plugin(w.admin, name, "agent."+name, quietCode)
		w.waitPlugin(name, map[string]bool{smsv1.ConditionReady: true})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("the operator read Plugins %v from the API server before it first patched their status", early)
	}
}
