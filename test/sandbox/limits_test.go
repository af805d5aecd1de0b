package sandbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/drivers/executor/isolated"
)

// routePlugin is a small agent plugin serving GET /<name>.
func routePlugin(id, name string) map[string]any {
	return map[string]any{
		"manifest": map[string]any{"id": id, "version": "1", "points": []string{"route"}},
		"code": `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/` + name + `', handler: async () => ({ body: '` + name + `' }) })
}`,
	}
}

// verdict submits p for who and returns the judge's verdict.
func (s *server) verdict(who string, p map[string]any) map[string]any {
	s.t.Helper()
	w := s.serveFor(context.Background(), who, "POST /api/plugins", p)
	var v map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || w.Code != http.StatusOK {
		s.t.Fatalf("submit %v for %s = %d %s", p["manifest"], who, w.Code, w.Body)
	}
	return v
}

// A requester holding as many sandboxes as MaxChildrenPerRequester allows
// has a further submission rejected at the load gate, with a reason that
// names the bound; another requester still mounts, and disabling one of
// the first requester's plugins frees a place.
// Seen failing without the judge naming the requester in the load's
// context: alice's second plugin mounted.
func TestRequesterShareRefusedAtLoadGate(t *testing.T) {
	exec, err := isolated.New(isolated.Options{Command: []string{os.Args[0]}, Env: []string{childVar + "=1"}, MaxChildrenPerRequester: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := boot(t, exec)
	if v := s.verdict("alice", routePlugin("agent.a1", "a1")); v["status"] != "mounted" {
		t.Fatalf("alice's first plugin: %v, want mounted", v)
	}
	v := s.verdict("alice", routePlugin("agent.a2", "a2"))
	reason, _ := v["reason"].(string)
	if v["status"] != "rejected" || v["gate"] != "load" || !strings.Contains(reason, "MaxChildrenPerRequester") {
		t.Fatalf("alice's second plugin: %v, want rejected at the load gate naming MaxChildrenPerRequester", v)
	}
	if v := s.verdict("bob", routePlugin("agent.b1", "b1")); v["status"] != "mounted" {
		t.Fatalf("bob's plugin: %v, want mounted", v)
	}
	if w := s.serveFor(context.Background(), "alice", "POST /api/plugins/agent.a1/disable", map[string]any{}); w.Code != http.StatusOK {
		t.Fatalf("disable agent.a1 = %d %s", w.Code, w.Body)
	}
	if v := s.verdict("alice", routePlugin("agent.a2", "a2")); v["status"] != "mounted" {
		t.Fatalf("alice's second plugin after she disabled her first: %v, want mounted", v)
	}
}
