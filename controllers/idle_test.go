package controllers_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// countingTransport counts the requests made to one host.
type countingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	host string
	seen []string
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if r.URL.Host == c.host {
		c.seen = append(c.seen, r.Method+" "+r.URL.Path)
	}
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

// count has c count the requests to endpoint's host from now on.
func (c *countingTransport) count(t *testing.T, endpoint string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.host = u.Host
	c.mu.Unlock()
}

func (c *countingTransport) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.seen
	c.seen = nil
	return out
}

// At idle the operator asks a kernel one thing per resync, its state, and
// keeps its event stream open: Ready Plugins do not poll. With the default
// resync of five minutes that is one request in five minutes. Seen failing
// with Ready Plugins requeued every resync (a request each).
func TestIdleKernelGetsOneRequestPerResync(t *testing.T) {
	const poll = time.Second
	counter := &countingTransport{next: http.DefaultTransport}
	http.DefaultTransport = counter // the operator's kernel client uses it
	t.Cleanup(func() { http.DefaultTransport = counter.next })

	w := newWorldPolling(t, poll)
	tenant := w.tenant("acme", smsv1.TenantJudge{})
	for _, name := range []string{"one", "two", "three"} {
		w.plugin(w.admin, name, "agent."+name, quietCode)
		w.waitPlugin(name, map[string]bool{smsv1.ConditionReady: true})
	}
	counter.count(t, tenant.Status.AdminEndpoint)
	time.Sleep(2 * poll) // let the burst of becoming Ready settle
	counter.take()

	const window = 5 * poll
	time.Sleep(window)
	seen := counter.take()
	if len(seen) == 0 {
		t.Fatalf("no request to %s counted: the counter does not see the kernel", tenant.Status.AdminEndpoint)
	}
	if max := int(window/poll) + 1; len(seen) > max {
		t.Fatalf("requests to an idle kernel in %s with a resync every %s: got %d %v, want at most %d", window, poll, len(seen), seen, max)
	}
	for _, r := range seen {
		if r != "GET /api/state" {
			t.Errorf("request to an idle kernel: got %q, want only GET /api/state", r)
		}
	}
}
