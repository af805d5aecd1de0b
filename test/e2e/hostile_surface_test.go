package e2e

import (
	"strings"
	"testing"
)

// Class 2: the admin surface belongs to the system. An agent route under
// a reserved prefix is refused by the judge; one whose pattern would match
// an admin path, approved by a careless reviewer, still never answers it:
// the admin's disable call reaches the admin API and the plugin goes.
// Seen failing (the agent answered its own disable call and stayed
// mounted) with match preferring the most specific route of either tier.
func TestHostileAdminShadowing(t *testing.T) {
	eachExecutor(t, func(t *testing.T, executor string) {
		h := startHostile(t, executor)
		for _, path := range []string{"/api/plugins/agent.shadow/disable", "/healthz", "/metrics", "/readyz/x"} {
			code := `export default async function activate(cap) {
  await cap.contribute('route', { method: 'POST', path: '` + path + `', handler: async () => ({ body: 'mine' }) });
}`
			v := h.submit(t, map[string]any{"id": "agent.shadow", "version": "1", "points": []string{"route"}}, code)
			if v.str("status") != "rejected" || !strings.Contains(v.str("reason"), "reserved") {
				t.Fatalf("route %s: verdict %s, want rejected as reserved", path, v.text)
			}
		}
		code := `export default async function activate(cap) {
  await cap.contribute('route', { method: 'POST', path: '/:any/plugins/:id/disable', handler: async () => ({ body: 'mine' }) });
}`
		v := h.submit(t, map[string]any{"id": "agent.shadow", "version": "1", "points": []string{"route"}}, code)
		h.approve(t, v)
		if r := h.app.do(call{"POST", "/x/plugins/y/disable", "", nil}); r.text != "mine" {
			t.Fatalf("the agent route outside /api = %d %s, want its own answer", r.status, r.text)
		}
		for _, k := range []*kernelProc{h.app, h.admin} {
			if r := k.do(call{"POST", "/api/plugins/agent.shadow/disable", token, nil}); r.text == "mine" {
				t.Fatalf("%s: the agent answered the admin's disable call", k.url)
			}
		}
		state := h.admin.do(call{"GET", "/api/state", token, nil})
		if !strings.Contains(state.text, `"id":"agent.shadow","version":"1","trust":"agent","enabled":false`) {
			t.Fatalf("after the admin's disable the state = %.600s, want agent.shadow disabled", state.text)
		}
	})
}

// Class 2: with --admin-listen the admin API (the ORM's REST API with it)
// answers only on its own listener; the application listener serves the
// application's routes and the probes. Seen failing with serveApp serving
// every route (for /api/orm, baseline's TestORMRESTOnlyOnAdminListener saw
// it failing with the ORM's routes not marked Admin).
func TestHostileAdminListener(t *testing.T) { eachExecutor(t, testAdminListener) }

func testAdminListener(t *testing.T, executor string) {
	h := startHostile(t, executor)
	for _, path := range []string{"/api/state", "/metrics", "/api/approvals", "/api/orm"} {
		if r := h.app.do(call{"GET", path, token, nil}); r.status != 404 {
			t.Errorf("GET %s on the application listener = %d, want 404", path, r.status)
		}
		if r := h.admin.do(call{"GET", path, token, nil}); r.status != 200 {
			t.Errorf("GET %s on the admin listener = %d %s, want 200", path, r.status, r.text)
		}
	}
	for _, k := range []*kernelProc{h.app, h.admin} {
		if r := k.do(call{"GET", "/readyz", "", nil}); r.status != 200 {
			t.Errorf("GET /readyz on %s = %d, want 200", k.url, r.status)
		}
		// The application's users talk to the agent on its listener.
		if r := k.do(call{"POST", "/api/chat", "", map[string]string{"session": "s", "text": "hi"}}); r.status != 401 {
			t.Errorf("POST /api/chat without a credential on %s = %d %s, want 401 (served, and guarded)", k.url, r.status, r.text)
		}
	}
}

// Class 2: agent code never sees credentials. A route that answers the
// request it received carries no Authorization header, cookie or token
// anywhere, and the caller key names who called without a secret; a
// request carrying the token elsewhere (here the query) is refused before
// the handler runs. Seen failing (the bearer token came back) with
// forAgent not called, and (a 200) with the token search taken out.
func TestHostileCredentialTheft(t *testing.T) {
	eachExecutor(t, func(t *testing.T, executor string) {
		h := startHostile(t, executor)
		code := `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/steal', handler: async (req) =>
    ({ body: { req, caller: await cap.invoke('caller', 'current') } }) });
}`
		v := h.submit(t, map[string]any{"id": "agent.thief", "version": "1", "optional": []string{"caller"}, "points": []string{"route"}}, code)
		h.approve(t, v)
		if r := h.app.do(call{"GET", "/steal?t=" + token, token, nil}); r.status != 400 || strings.Contains(r.text, token) {
			t.Fatalf("GET /steal with the token in the query = %d %s, want a 400 that does not echo it", r.status, r.text)
		}
		r := h.app.do(call{"GET", "/steal?t=x", token, nil})
		if r.status != 200 {
			t.Fatalf("GET /steal = %d %s", r.status, r.text)
		}
		if strings.Contains(r.text, token) || strings.Contains(strings.ToLower(r.text), "authorization") {
			t.Fatalf("the agent handler saw a credential: %s", r.text)
		}
		if !strings.Contains(r.text, `"authenticated":true`) || !strings.Contains(r.text, `"name":"admin"`) {
			t.Fatalf("caller = %s, want the admin credential named, with no secret", r.text)
		}
	})
}
