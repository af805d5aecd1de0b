package baseline_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/plugins/auth"
)

// A kernel mounts under a path prefix of an existing server with
// http.StripPrefix: its admin API, probes, sign-in and agent routes answer
// under /sms, and the server keeps its own routes (docs/applications.md).
// Seen failing with the mount made without StripPrefix: the kernel routes
// on the path it is handed, and every /sms path was a 404.
func TestMountUnderAPrefix(t *testing.T) {
	const token = "prefix-token"
	e := baselinetest.New(t, baselinetest.Options{AdminToken: token,
		Auth: &auth.Options{Bootstrap: &auth.Bootstrap{Login: "root", Password: "root-password-long-enough"}, Hash: baselinetest.FastHash}})
	if r := e.Do("POST", "/api/plugins", map[string]any{
		"manifest": map[string]any{"id": "agent.hello", "version": "1", "points": []string{"route"}},
		"code":     `export default async function activate(cap) { await cap.contribute('route', { method: 'GET', path: '/hello', handler: async () => ({ body: { hello: 'world' } }) }) }`,
	}, http.Header{"Authorization": {"Bearer " + token}}); r.Status != 200 {
		t.Fatalf("submit = %d %s", r.Status, r.Body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "the shop's own page") })
	mux.Handle("/sms/", http.StripPrefix("/sms", e.Baseline))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		method, path, body, token, want string
		status                          int
	}{
		{"GET", "/sms/api/state", "", token, `"kernel":"test"`, 200},
		{"GET", "/sms/readyz", "", "", "", 200},
		{"GET", "/sms/hello", "", "", `"hello":"world"`, 200},
		{"POST", "/sms" + auth.RouteLogin, `{"login":"root","password":"root-password-long-enough"}`, "", `"login":"root"`, 200},
		{"GET", "/sms/api/state", "", "", "", 401},
		{"GET", "/catalogue", "", "", "the shop's own page", 200},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(auth.CSRFHeader, "1")
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != c.status || !strings.Contains(string(raw), c.want) {
			t.Errorf("%s %s = %d %.120s, want %d with %q", c.method, c.path, res.StatusCode, raw, c.status, c.want)
		}
	}
}
