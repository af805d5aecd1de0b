package http_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// secured sets up the http plugin with two credentials and extra plugins.
func secured(t *testing.T, plugins ...kernel.Plugin) fixture {
	t.Helper()
	exec := kerneltest.NewExecutor()
	k := kernel.New(kernel.Options{Executor: exec})
	opts := smshttp.Options{Credentials: []smshttp.Credential{
		{Name: "reader", Token: "read-token", Scopes: []smshttp.Scope{smshttp.ScopeRead}},
		{Name: "operator", Token: "op-token", Scopes: smshttp.Scopes},
	}}
	for _, p := range append([]kernel.Plugin{smshttp.Plugin(opts)}, plugins...) {
		if err := k.Install(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Settle(context.Background()); err != nil {
		t.Fatalf("settle: %v", err)
	}
	v, _ := k.GetValue(smshttp.Key)
	return fixture{k: k, exec: exec, srv: v.(smshttp.Service)}
}

// agentRouteSpec is an agent plugin serving one route: its id (also the
// name of its script), method and path.
type agentRouteSpec struct{ id, method, path string }

// agentRoute registers a script contributing the agent route whose handler
// answers what it received, and returns its manifest.
func agentRoute(f fixture, r agentRouteSpec, seen func(req map[string]any)) kernel.Manifest {
	id, method, path := r.id, r.method, r.path
	f.exec.Register(id, func(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
		handler := u.Func("h", func(ctx context.Context, args []any) (any, error) {
			req := args[0].(map[string]any)
			if seen != nil {
				seen(req)
			}
			who, err := h.Invoke(ctx, smshttp.CallerKey, "current", nil)
			if err != nil {
				return nil, err
			}
			return map[string]any{"body": map[string]any{"agent": id, "caller": who}}, nil
		})
		_, err := h.Contribute(ctx, smshttp.RoutePoint, kerneltest.JSON(map[string]any{"method": method, "path": path, "handler": handler}))
		return err
	})
	return kernel.Manifest{ID: id, Version: "1", Optional: []string{smshttp.CallerKey}, Points: []string{smshttp.RoutePoint}}
}

func (f fixture) call(t *testing.T, method, path string, header map[string]string) result {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	return result{rec.Code, rec.Header().Get("Content-Type"), strings.TrimSpace(rec.Body.String())}
}

// An agent route may not be declared under a reserved prefix: the defaults
// or one a system plugin reserves. Seen failing with the reserved check
// removed from validate.
func TestAgentRoutesStayOutOfReservedPrefixes(t *testing.T) {
	ctx := context.Background()
	reserve := kernel.Plugin{Manifest: kernel.Manifest{ID: "sys.auth", Version: "1",
		Contributes: map[string][]any{smshttp.ReservedPoint: {"/auth"}}}}
	for _, path := range []string{"/api/plugins/agent.x/disable", "/api", "/healthz", "/readyz", "/metrics", "/metrics/x", "/auth/login"} {
		f := secured(t, reserve)
		m := agentRoute(f, agentRouteSpec{"agent.x", "POST", path}, nil)
		err := kerneltest.Agent(ctx, f.k, m, "agent.x")
		if kernel.CodeOf(err) != kernel.CodeValidation || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("agent route %s: error %v, want a validation error saying it is reserved", path, err)
		}
	}
}

// System routes win every match, and no request under a reserved prefix
// reaches an agent route, whatever the agent's pattern.
// Seen failing (the agent answered) with match taking the most specific
// route of either tier, and with the reserved check skipped at match time.
func TestSystemRoutesWinEveryMatch(t *testing.T) {
	ctx := context.Background()
	admin := routes("sys.admin", smshttp.Route{Method: "POST", Path: "/api/plugins/:id/disable", Scope: smshttp.ScopeAdmin,
		Handler: func(context.Context, *smshttp.Request) (*smshttp.Response, error) { return smshttp.JSON("system"), nil }})
	f := secured(t, admin)
	if err := kerneltest.Agent(ctx, f.k, agentRoute(f, agentRouteSpec{"agent.shadow", "POST", "/:a/plugins/agent.shadow/disable"}, nil), "agent.shadow"); err != nil {
		t.Fatal(err)
	}
	if err := kerneltest.Agent(ctx, f.k, agentRoute(f, agentRouteSpec{"agent.wild", "GET", "/:a/:b"}, nil), "agent.wild"); err != nil {
		t.Fatal(err)
	}
	op := map[string]string{"Authorization": "Bearer op-token"}
	if got := f.call(t, "POST", "/api/plugins/agent.shadow/disable", op); got.body != "system" {
		t.Fatalf("the admin route answered %d %s, want the system handler", got.status, got.body)
	}
	if got := f.call(t, "GET", "/api/anything", op); got.status != 404 {
		t.Fatalf("GET /api/anything = %d %s, want 404: no agent route serves under /api", got.status, got.body)
	}
	if got := f.call(t, "GET", "/x/y", nil); got.status != 200 || !strings.Contains(got.body, "agent.wild") {
		t.Fatalf("GET /x/y = %d %s, want the agent route", got.status, got.body)
	}
}

// Agent handlers never see credentials: no Authorization, Proxy-Authorization
// or Cookie header (a configured token anywhere else is refused, see
// TestAgentRoutesRefuseTokensElsewhere). Agent code learns who calls
// through the caller key, which holds no secret.
// Seen failing with forAgent not called in serve, and with X-Admin-Token
// left off the credential headers (a 400: the token was "elsewhere").
func TestAgentHandlersSeeNoCredentials(t *testing.T) {
	ctx := context.Background()
	f := secured(t)
	var mu sync.Mutex
	var got map[string]any
	m := agentRoute(f, agentRouteSpec{"agent.spy", "GET", "/spy"}, func(req map[string]any) {
		mu.Lock()
		got = req
		mu.Unlock()
	})
	if err := kerneltest.Agent(ctx, f.k, m, "agent.spy"); err != nil {
		t.Fatal(err)
	}
	res := f.call(t, "GET", "/spy?q=1", map[string]string{
		"Authorization": "Bearer op-token", "Cookie": "sid=secret", "Proxy-Authorization": "Basic x",
		"X-Admin-Token": "op-token", "X-Plain": "kept"})
	if res.status != 200 {
		t.Fatalf("agent route = %d %s", res.status, res.body)
	}
	raw, _ := json.Marshal(got)
	for _, secret := range []string{"op-token", "sid=secret", "Basic x", "authorization", "cookie", "x-admin-token"} {
		if strings.Contains(string(raw), secret) {
			t.Fatalf("the agent handler saw %q in %s", secret, raw)
		}
	}
	if !strings.Contains(string(raw), "kept") || !strings.Contains(string(raw), `"q":"1"`) {
		t.Fatalf("the agent handler lost ordinary headers or query values: %s", raw)
	}
	if !strings.Contains(res.body, `"name":"operator"`) || strings.Contains(res.body, "op-token") {
		t.Fatalf("caller as agent code sees it = %s, want the operator's name and no token", res.body)
	}
}

// With credentials configured, a route with a scope needs a credential that
// holds it: none is 401, another scope is 403. Public requests and routes
// without a scope stay open; with no credential configured all are open.
// Seen failing with admit returning nil.
func TestScopes(t *testing.T) {
	ok := func(context.Context, *smshttp.Request) (*smshttp.Response, error) { return smshttp.JSON("ok"), nil }
	app := routes("sys.app",
		smshttp.Route{Method: "GET", Path: "/api/things", Scope: smshttp.ScopeRead, Handler: ok},
		smshttp.Route{Method: "POST", Path: "/api/things", Scope: smshttp.ScopeAdmin, Handler: ok},
		smshttp.Route{Method: "GET", Path: "/api/open/:name", Scope: smshttp.ScopeRead, Handler: ok,
			Public: func(r *smshttp.Request) bool { return r.Params["name"] == "public" }},
		smshttp.Route{Method: "GET", Path: "/healthz", Handler: ok})
	f := secured(t, app)
	reader := map[string]string{"Authorization": "Bearer read-token"}
	cases := []struct {
		method, path string
		header       map[string]string
		want         int
	}{
		{"GET", "/api/things", nil, 401},
		{"GET", "/api/things", map[string]string{"Authorization": "Bearer wrong"}, 401},
		{"GET", "/api/things", reader, 200},
		{"POST", "/api/things", reader, 403},
		{"POST", "/api/things", map[string]string{"Authorization": "Bearer op-token"}, 200},
		{"POST", "/api/things", map[string]string{"X-Admin-Token": "op-token"}, 200},
		{"POST", "/api/things", map[string]string{"X-Admin-Token": "read-token"}, 403},
		{"GET", "/api/things", map[string]string{"X-Admin-Token": "wrong"}, 401},
		{"GET", "/api/open/public", nil, 200},
		{"GET", "/api/open/private", nil, 401},
		{"GET", "/healthz", nil, 200},
	}
	for _, c := range cases {
		if got := f.call(t, c.method, c.path, c.header); got.status != c.want {
			t.Errorf("%s %s with %v = %d %s, want %d", c.method, c.path, c.header, got.status, got.body, c.want)
		}
	}
	open := setup(t, app)
	if got := open.call(t, "POST", "/api/things", nil); got.status != 200 {
		t.Fatalf("with no credential configured POST /api/things = %d, want 200", got.status)
	}
}

// A system route under /api must name its scope, so none is left open by
// mistake; admin routes are left out of the application handler.
// Seen failing with the scope check removed from validate.
func TestSystemAPIRoutesNeedAScope(t *testing.T) {
	ok := func(context.Context, *smshttp.Request) (*smshttp.Response, error) { return smshttp.JSON("ok"), nil }
	f := setup(t)
	if err := f.k.Install(routes("sys.sloppy", smshttp.Route{Method: "GET", Path: "/api/leak", Handler: ok})); err != nil {
		t.Fatal(err)
	}
	if err := f.k.Settle(context.Background()); kernel.CodeOf(err) != kernel.CodeValidation {
		t.Fatalf("an /api route without a scope: settle = %v, want a validation error", err)
	}
	g := setup(t, routes("sys.admin", smshttp.Route{Method: "GET", Path: "/api/admin", Scope: smshttp.ScopeRead, Admin: true, Handler: ok}))
	rec := httptest.NewRecorder()
	g.srv.AppHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/admin", nil))
	if rec.Code != 404 {
		t.Fatalf("the application handler served an admin route: %d", rec.Code)
	}
	if got := g.call(t, "GET", "/api/admin", nil); got.status != 200 {
		t.Fatalf("the full handler = %d, want 200", got.status)
	}
}
