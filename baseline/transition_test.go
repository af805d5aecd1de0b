package baseline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/judge"
)

// appCode is version v of an agent plugin serving GET /app: the handler
// answers its version before and after a call through the bridge, so an
// answer that two versions made would show two different names.
func appCode(v string) string {
	return fmt.Sprintf(`const V = %q;
export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/app', handler: async () => {
    const before = V;
    const who = await cap.invoke('caller', 'current');
    return { body: { before, after: V, anonymous: !who.authenticated } };
  } });
}`, v)
}

// appServer is a baseline with auto-approval serving over loopback.
type appServer struct {
	bl     *baseline.Baseline
	url    string
	client *http.Client
}

func startApp(t testing.TB) appServer {
	t.Helper()
	bl, err := baseline.New(context.Background(), baseline.Options{Policy: judge.Policy{AutoApprove: true}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(bl)
	t.Cleanup(func() {
		srv.Close()
		_ = bl.Close()
	})
	return appServer{bl: bl, url: srv.URL, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// mount submits version (manifest version n) of agent.app and waits for
// the judge's verdict.
func (s appServer) mount(t testing.TB, n int, version string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"manifest": map[string]any{"id": "agent.app", "version": fmt.Sprint(n), "optional": []string{"caller"}, "points": []string{"route"}},
		"code":     appCode(version),
	})
	resp, err := s.client.Post(s.url+"/api/plugins", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if !strings.Contains(string(raw), `"status":"mounted"`) {
		t.Fatalf("mounting %s: %s", version, raw)
	}
}

// get fetches /app and returns the version that answered, or why the
// answer is wrong.
func (s appServer) get() (string, error) {
	resp, err := s.client.Get(s.url + "/app")
	if err != nil {
		return "", err
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var out struct {
		Before, After string
		Anonymous     bool
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || !out.Anonymous {
		return "", fmt.Errorf("GET /app = %d %s", resp.StatusCode, raw)
	}
	if out.Before != out.After {
		return "", fmt.Errorf("GET /app mixed versions: %s", raw)
	}
	return out.Before, nil
}

// Requests flow through a route while its plugin moves v1 -> v2 -> v1, three
// times, through the judge: none fails, none is answered by a mix of
// versions, and a request sent after a mount returns is answered by the
// new version. Seen failing with the HTTP routing table's LateRemove off
// (GET /app = 404 during the swaps) and with the proxy's check for
// draining activations removed (409: the function belongs to a disposed
// plugin).
func TestTransitionUnderLoad(t *testing.T) {
	s := startApp(t)
	s.mount(t, 1, "v1")
	stop := make(chan struct{})
	var served, failed atomic.Int64
	var mu sync.Mutex
	var failures []string
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.get(); err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					failed.Add(1)
					continue
				}
				served.Add(1)
			}
		})
	}
	n := 1
	for range 3 {
		for _, v := range []string{"v2", "v1"} {
			for mark := served.Load(); served.Load() < mark+10 && failed.Load() == 0; {
				runtime.Gosched() // requests flow before each mount
			}
			n++
			s.mount(t, n, v)
			if got, err := s.get(); err != nil || got != v {
				t.Errorf("after mounting %s, a new request got %q, %v", v, got, err)
			}
		}
	}
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d requests failed during the transitions; first: %s", len(failures), int(served.Load())+len(failures), failures[0])
	}
}
