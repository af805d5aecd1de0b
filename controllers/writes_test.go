package controllers_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// writeCounter counts the operator's writes to the API server (every
// request but GET, which lists and watches use too), by resource and
// subresource ("plugins", "plugins/status", "events", ...).
type writeCounter struct {
	mu sync.Mutex
	by map[string]int
}

func (c *writeCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method != http.MethodGet {
			c.mu.Lock()
			if c.by == nil {
				c.by = map[string]int{}
			}
			c.by[resourceOf(r.URL.Path)]++
			c.mu.Unlock()
		}
		return next.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// take returns the counts so far and starts again from zero.
func (c *writeCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	by := c.by
	c.by = nil
	return by
}

// resourceOf returns the resource a request's path names, with its
// subresource: .../namespaces/NS/plugins/NAME/status is "plugins/status".
func resourceOf(path string) string {
	_, rest, ok := strings.Cut(path, "/namespaces/")
	if !ok {
		return path
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) >= 4:
		return parts[1] + "/" + parts[3]
	case len(parts) >= 2:
		return parts[1]
	}
	return path
}

// A Plugin that mounts costs the API server at most two writes on its way
// to Ready, counted at the operator's transport, every write of every
// kind: the finalizer comes with its create (the webhook), its status is
// one patch (a reconcile that starts from a cache older than its own last
// patch does not send it again), an ordinary mount records no Event, and
// the Tenant's plugin counts are written at most every countsInterval.
// Seen failing with the Mounted Event recorded for each mount (16 event
// writes for 10 Plugins), with the status memo left out (26 status
// patches for 20 Plugins; with lastTransitionTime in its hash, 21) and
// with the counts written on every change (13 Tenant writes for 20
// Plugins).
func TestPluginToReadyWritesAtMostTwice(t *testing.T) {
	counter := &writeCounter{}
	w := newWorldWrapped(t, time.Hour, counter.wrap)
	w.tenant("acme", smsv1.TenantJudge{})
	time.Sleep(2 * time.Second) // the tenant's own writes settle
	counter.take()
	const n = 20
	for i := range n {
		name := fmt.Sprintf("quiet%d", i)
		w.plugin(w.admin, name, "agent."+name, quietCode)
	}
	for i := range n {
		w.waitPlugin(fmt.Sprintf("quiet%d", i), map[string]bool{smsv1.ConditionReady: true})
	}
	time.Sleep(3 * time.Second) // writes that follow Ready count too
	by := counter.take()
	total := 0
	for _, k := range slices.Sorted(maps.Keys(by)) {
		total += by[k]
	}
	t.Logf("%d Plugins to Ready: %d writes %v", n, total, by)
	if total > 2*n || by["plugins/status"] > n || by["tenants/status"] > n/4 {
		t.Errorf("%d Plugins to Ready took %d writes %v; want at most %d, one status patch per Plugin and at most %d Tenant writes",
			n, total, by, 2*n, n/4)
	}
}
