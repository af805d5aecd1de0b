package adminapi_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
)

// DELETE of a plugin another enabled plugin injects a key of is a 409
// naming it, and changes nothing; ?force=true removes it and the state
// shows the forced_uninstall taint. Seen failing (200 at once) with
// Uninstall's usersOf check removed.
func TestUninstallInUse(t *testing.T) {
	f := setup(t, options{token: token})
	plugins := []map[string]any{
		{"manifest": map[string]any{"id": "agent.provider", "version": "1", "provide": []string{"svc.hello"}},
			"code": `export default async function activate(cap) { await cap.provide('svc.hello', { hi: 'there' }); }`},
		{"manifest": map[string]any{"id": "agent.user", "version": "1", "inject": []string{"svc.hello"}},
			"code": `export default async function activate(cap) { await cap.get('svc.hello'); }`},
	}
	for _, p := range plugins {
		if r := f.do(t, request{"POST", "/api/plugins", token, p}); r.str("status") != "mounted" {
			t.Fatalf("submit = %d %s, want mounted", r.status, r.text)
		}
	}
	r := f.do(t, request{"DELETE", "/api/plugins/agent.provider", token, nil})
	if r.status != 409 || !strings.Contains(r.text, "agent.user injects svc.hello") {
		t.Fatalf("DELETE of a provider in use = %d %s, want 409 naming agent.user", r.status, r.text)
	}
	if v, _ := f.k.Fiber("agent.user"); v.State != kernel.StateActive {
		t.Fatalf("agent.user after the refused uninstall = %s, want active", v.State)
	}
	if r := f.do(t, request{"DELETE", "/api/plugins/agent.provider?force=true", token, nil}); r.status != 200 {
		t.Fatalf("forced DELETE = %d %s", r.status, r.text)
	}
	state := f.do(t, request{"GET", "/api/state", token, nil})
	taint, _ := state.body["taint"].([]any)
	if !slices.Contains(taint, any("forced_uninstall")) {
		t.Fatalf("taint after a forced uninstall = %v, want forced_uninstall", taint)
	}
}
