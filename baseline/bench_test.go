package baseline_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/judge"
)

// routeCode is an agent plugin serving GET /r<i>/:x.
func routeCode(i int) string {
	return fmt.Sprintf(`export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/r%d/:x', handler: async (req) => ({ body: { x: req.params.x } }) })
}`, i)
}

// BenchmarkServe measures requests per second and the 99th percentile
// latency over loopback HTTP, with 100 agent plugins mounted, for the admin
// state and for one agent route. Clients run in parallel with keep-alive.
func BenchmarkServe(b *testing.B) {
	ctx := context.Background()
	bl, err := baseline.New(ctx, baseline.Options{Policy: judge.Policy{AutoApprove: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = bl.Close() }()
	srv := httptest.NewServer(bl)
	defer srv.Close()
	for i := range 100 {
		body := fmt.Sprintf(`{"manifest":{"id":"agent.r%d","version":"1","points":["route"]},"code":%q}`, i, routeCode(i))
		resp, err := http.Post(srv.URL+"/api/plugins", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if !strings.Contains(string(raw), `"status":"mounted"`) {
			b.Fatalf("plugin %d: %s", i, raw)
		}
	}
	for _, path := range []string{"/api/state", "/r42/hello"} {
		b.Run(strings.ReplaceAll(strings.Trim(path, "/"), "/", "_"), func(b *testing.B) { load(b, loadSpec{url: srv.URL + path}) })
	}
	// A client that sends back the state's ETag gets 304 until the kernel
	// changes.
	resp, err := http.Get(srv.URL + "/api/state")
	if err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
	b.Run("api_state_revalidate", func(b *testing.B) {
		load(b, loadSpec{url: srv.URL + "/api/state", etag: resp.Header.Get("ETag"), status: http.StatusNotModified})
	})
}

// loadSpec is what load sends: GET url, with If-None-Match etag when set,
// expecting status (200 when zero).
type loadSpec struct {
	url, etag string
	status    int
}

// load sends its GET from parallel clients and reports req/s and p99.
func load(b *testing.B, spec loadSpec) {
	url, want := spec.url, spec.status
	if want == 0 {
		want = http.StatusOK
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var mu sync.Mutex
	var all []time.Duration
	start := time.Now()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			t0 := time.Now()
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			if spec.etag != "" {
				req.Header.Set("If-None-Match", spec.etag)
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != want {
				b.Errorf("GET %s = %d, want %d", url, resp.StatusCode, want)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		all = append(all, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}
