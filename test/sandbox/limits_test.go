package sandbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

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

// A requester holding as many live sandboxes as MaxChildrenPerRequester
// allows, none idle (her plugin is in a call), has a further submission
// rejected at the load gate, with a reason that names the bound; another
// requester still mounts. Once her plugin is idle, her next submission
// mounts by putting it to sleep.
// Seen failing without the judge naming the requester in the load's
// context: alice's second plugin mounted while her first was busy.
func TestRequesterShareRefusedAtLoadGate(t *testing.T) {
	exec, err := isolated.New(isolated.Options{Command: []string{os.Args[0]}, Env: []string{childVar + "=1"},
		MaxChildrenPerRequester: 1, IdleAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s := boot(t, exec)
	if v := s.verdict("alice", slowRoute); v["status"] != "mounted" {
		t.Fatalf("alice's first plugin: %v, want mounted", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := s.getSlow(ctx)
	v := s.verdict("alice", routePlugin("agent.a2", "a2"))
	reason, _ := v["reason"].(string)
	if v["status"] != "rejected" || v["gate"] != "load" || !strings.Contains(reason, "MaxChildrenPerRequester") {
		t.Fatalf("alice's second plugin while her first is busy: %v, want rejected at the load gate naming MaxChildrenPerRequester", v)
	}
	if v := s.verdict("bob", routePlugin("agent.b1", "b1")); v["status"] != "mounted" {
		t.Fatalf("bob's plugin: %v, want mounted", v)
	}
	cancel()
	answer(t, done)
	if v := s.verdict("alice", routePlugin("agent.a2", "a2")); v["status"] != "mounted" {
		t.Fatalf("alice's second plugin once her first is idle: %v, want mounted", v)
	}
	for _, path := range []string{"/a2", "/b1"} {
		if w := s.serve(context.Background(), "GET", path, nil); w.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, w.Code, w.Body)
		}
	}
}
