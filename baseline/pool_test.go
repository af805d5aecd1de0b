package baseline_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/contracts"
)

func TestValidTenant(t *testing.T) {
	for id, want := range map[string]bool{"acme": true, "a-1_b": true, "9lives": true, "": false, "-x": false,
		"Acme": false, "a.b": false, "a/b": false, strings.Repeat("a", 63): true, strings.Repeat("a", 64): false} {
		if got := baseline.ValidTenant(id); got != want {
			t.Errorf("ValidTenant(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestResolve(t *testing.T) {
	p := baseline.NewTenantPool(baseline.PoolOptions{})
	cases := []struct{ host, header, want string }{
		{"acme.example.com", "", "acme"},
		{"acme.localhost:8787", "", "acme"},
		{"localhost:8787", "", ""},
		{"127.0.0.1:8787", "", ""},
		{"acme.localhost", "globex", "globex"},
		{"example.com", "", ""},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/api/state", nil)
		r.Host = tc.host
		if tc.header != "" {
			r.Header.Set(baseline.TenantHeader, tc.header)
		}
		if got := p.Resolve(r); got != tc.want {
			t.Errorf("Resolve(host %q, header %q) = %q, want %q", tc.host, tc.header, got, tc.want)
		}
	}
}

type countingOpen struct {
	calls atomic.Int32
	fail  atomic.Bool
	dir   string
}

func (c *countingOpen) open(ctx context.Context, tenant string) (contracts.Store, error) {
	c.calls.Add(1)
	if c.fail.Load() {
		return nil, errors.New("disk unavailable")
	}
	return baseline.SQLiteStores(c.dir)(ctx, tenant)
}

// Tenants get separate kernels on separate stores; requests without a
// tenant are a 400. Seen failing with ServeHTTP ignoring the resolved tenant.
func TestPoolIsolatesTenants(t *testing.T) {
	open := &countingOpen{dir: t.TempDir()}
	p := baseline.NewTenantPool(baseline.PoolOptions{Open: open.open})
	defer func() { _ = p.Close() }()
	send := func(tenant, method, path, body string) (int, string) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if tenant != "" {
			r.Header.Set(baseline.TenantHeader, tenant)
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	if code, body := send("", "GET", "/api/state", ""); code != 400 || !strings.Contains(body, "no tenant") {
		t.Fatalf("no tenant = %d %s, want 400", code, body)
	}
	if code, _ := send("Bad!", "GET", "/api/state", ""); code != 400 {
		t.Fatalf("invalid tenant = %d, want 400", code)
	}
	for _, tenant := range []string{"acme", "globex"} {
		if code, body := send(tenant, "GET", "/api/state", ""); code != 200 || !strings.Contains(body, `"kernel":"`+tenant+`"`) {
			t.Fatalf("state of %s = %d %.120s", tenant, code, body)
		}
	}
	if got := p.Tenants(); len(got) != 2 || got[0] != "acme" || got[1] != "globex" {
		t.Fatalf("Tenants = %v, want [acme globex]", got)
	}
}

// Concurrent first requests boot a tenant once; a failed boot is retried
// by the next request. Seen failing with the failed entry kept in the map.
func TestPoolBootOnceAndRetry(t *testing.T) {
	ctx := context.Background()
	open := &countingOpen{dir: t.TempDir()}
	p := baseline.NewTenantPool(baseline.PoolOptions{Open: open.open})
	defer func() { _ = p.Close() }()
	open.fail.Store(true)
	if _, err := p.Get(ctx, "acme"); err == nil || !strings.Contains(err.Error(), "disk unavailable") {
		t.Fatalf("Get with a failing store = %v, want the store's error", err)
	}
	open.fail.Store(false)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := p.Get(ctx, "acme"); err != nil {
				t.Errorf("Get: %v", err)
			}
		})
	}
	wg.Wait()
	if n := open.calls.Load(); n != 2 {
		t.Fatalf("store opened %d times, want 2 (one failure, one boot shared by 8 requests)", n)
	}
	if _, err := p.Get(ctx, "Not Valid"); err == nil {
		t.Fatal("an invalid tenant id was accepted")
	}
}

// Idle tenants are evicted and boot again from their store on the next
// request; after Close, Get fails. Seen failing with EvictIdle comparing
// against the boot time instead of the last use.
func TestPoolEviction(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	open := &countingOpen{dir: t.TempDir()}
	p := baseline.NewTenantPool(baseline.PoolOptions{Open: open.open, IdleAfter: time.Minute, Now: clock})
	for _, id := range []string{"a", "b"} {
		if _, err := p.Get(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	advance(50 * time.Second)
	if _, err := p.Get(ctx, "b"); err != nil { // b is used again
		t.Fatal(err)
	}
	advance(20 * time.Second)
	evicted, err := p.EvictIdle()
	if err != nil || len(evicted) != 1 || evicted[0] != "a" {
		t.Fatalf("EvictIdle = %v, %v; want [a]", evicted, err)
	}
	if got := p.Tenants(); len(got) != 1 || got[0] != "b" {
		t.Fatalf("Tenants = %v, want [b]", got)
	}
	if _, err := p.Get(ctx, "a"); err != nil || open.calls.Load() != 3 {
		t.Fatalf("Get after eviction = %v with %d opens, want a fresh boot (3)", err, open.calls.Load())
	}
	if err := p.Evict("b"); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(ctx, "a"); !errors.Is(err, baseline.ErrPoolClosed) {
		t.Fatalf("Get after Close = %v, want ErrPoolClosed", err)
	}
}
