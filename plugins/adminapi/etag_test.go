package adminapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// getState sends GET path with If-None-Match etag ("" for none) and returns
// the status, the ETag and the body.
func getState(t *testing.T, f fixture, path, etag string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("ETag"), string(raw)
}

// GET /api/state answers from a snapshot with an ETag: the same ETag
// while nothing changes (304 for a client that sends it back), a new one
// and the new state once a plugin is submitted, mounted or pending. Seen
// failing with the snapshot keyed on nothing that moves (the state stayed
// as first built).
func TestStateETag(t *testing.T) {
	f := setup(t, options{token: token})
	status, etag, body := getState(t, f, "/api/state", "")
	if status != 200 || etag == "" || !strings.Contains(body, `"fibers"`) {
		t.Fatalf("GET /api/state = %d %q %.80s", status, etag, body)
	}
	if status, again, _ := getState(t, f, "/api/state", ""); status != 200 || again != etag {
		t.Fatalf("a second GET = %d with ETag %q, want 200 and %q", status, again, etag)
	}
	if status, _, body := getState(t, f, "/api/state", etag); status != http.StatusNotModified || body != "" {
		t.Fatalf("GET with If-None-Match = %d %q, want 304 and no body", status, body)
	}
	if r := f.do(t, request{"POST", "/api/plugins", token, routePlugin("1")}); r.str("status") != "pending" {
		t.Fatalf("submit = %d %s", r.status, r.text)
	}
	status, changed, body := getState(t, f, "/api/state", etag)
	if status != 200 || changed == etag || !strings.Contains(body, `"pluginId":"agent.hello"`) {
		t.Fatalf("after a submission: %d %q %.200s; want 200, a new ETag and the pending approval", status, changed, body)
	}
	var v struct {
		Fibers []struct{ ID, Trust string }
	}
	_, filtered, raw := getState(t, f, "/api/state?trust=system&limit=1&offset=1", "")
	if err := json.Unmarshal([]byte(raw), &v); err != nil || len(v.Fibers) != 1 || v.Fibers[0].Trust != "system" || filtered == changed {
		t.Fatalf("a filtered page = %s (ETag %q), want one system fiber and its own ETag", raw, filtered)
	}
	if status, _, body := getState(t, f, "/api/state?trust=root", ""); status != 400 || !strings.Contains(body, "trust") {
		t.Fatalf("a bad filter = %d %s, want 400", status, body)
	}
}

// /api/state lists the plugins under "plugins" too, the seed API's name,
// exactly as under "fibers", filtered pages included. Seen failing with
// the alias left unset on a filtered page.
func TestStatePluginsAlias(t *testing.T) {
	f := setup(t, options{token: token})
	for _, path := range []string{"/api/state", "/api/state?trust=system&limit=2"} {
		_, _, raw := getState(t, f, path, "")
		var v struct {
			Fibers, Plugins []map[string]any
		}
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(v.Fibers)
		b, _ := json.Marshal(v.Plugins)
		if len(v.Fibers) == 0 || string(a) != string(b) {
			t.Errorf("%s: plugins %s, want the fibers %s", path, b, a)
		}
	}
}
