package e2e

import (
	"strings"
	"testing"
)

// Each bad plugin is rejected by the gate that should catch it, and the
// kernel keeps serving after every one.
func TestRejectionsNameTheirGate(t *testing.T) {
	k := start(t, kernelArgs(t, "--executor", "isolated")...)
	cases := []struct {
		name, id, code, gate string
		optional             []string
	}{
		{"import", "agent.imp", "import fs from 'fs'\nexport default async function activate(cap) {}", "lint", nil},
		{"syntax error", "agent.syntax", "export default async function activate(cap) { oops( }", "lint", nil},
		{"system id", "judge", "export default async function activate(cap) {}", "manifest", nil},
		{"reads the judge", "agent.spy", "export default async function activate(cap) { await cap.get('judge') }", "trust", []string{"judge"}},
		{"infinite loop", "agent.loop", "export default async function activate(cap) { for (;;) {} }", "load", nil},
		{"memory bomb", "agent.bomb", "export default async function activate(cap) { const a = []; for (;;) a.push('x'.repeat(1 << 20)) }", "load", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := plugin(tc.id, tc.code)
			if tc.optional != nil {
				p["manifest"].(map[string]any)["optional"] = tc.optional
			}
			v := k.do(call{"POST", "/api/plugins", token, p})
			if v.status != 200 || v.str("status") != "rejected" || v.str("gate") != tc.gate || v.str("reason") == "" {
				t.Fatalf("verdict = %d %s, want rejected at gate %s with a reason", v.status, v.text, tc.gate)
			}
			if r := k.do(call{"GET", "/healthz", "", nil}); r.status != 200 {
				t.Fatalf("after the rejection /healthz = %d", r.status)
			}
		})
	}
	events := k.do(call{"GET", "/api/events?limit=1000", token, nil})
	if n := strings.Count(events.text, `"type":"judge/rejected"`); n != len(cases) {
		t.Fatalf("event log has %d judge/rejected events, want %d", n, len(cases))
	}
	if s := k.do(call{"GET", "/api/state", token, nil}); strings.Contains(s.text, `"trust":"agent"`) {
		t.Fatalf("a rejected plugin was installed: %.400s", s.text)
	}
}

// Bad requests get the error they deserve and change nothing.
func TestBadInput(t *testing.T) {
	k := start(t, kernelArgs(t, "--executor", "goja")...)
	pending := k.do(call{"POST", "/api/plugins", token, plugin("agent.hello", helloCode)})
	stale := map[string]string{"by": "ada", "codeHash": "sha256:" + strings.Repeat("0", 64)}
	cases := []struct {
		name   string
		c      call
		status int
		kind   string
	}{
		{"malformed JSON", call{"POST", "/api/plugins", token, "{nope"}, 400, "validation"},
		{"wrong types", call{"POST", "/api/plugins", token, map[string]any{"manifest": []int{1}, "code": 2}}, 400, "validation"},
		{"oversized body", call{"POST", "/api/plugins", token, `"` + strings.Repeat("x", 2<<20) + `"`}, 413, "too_large"},
		{"unknown route", call{"GET", "/no/such/route", "", nil}, 404, "not_found"},
		{"missing token", call{"POST", "/api/plugins", "", plugin("agent.x", helloCode)}, 401, "auth"},
		{"wrong token", call{"POST", "/api/plugins/agent.hello/enable", "nope", nil}, 401, "auth"},
		{"stale code hash", call{"POST", "/api/approvals/" + pending.str("approvalId") + "/approve", token, stale}, 409, "conflict"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if r := k.do(tc.c); r.status != tc.status || r.kind() != tc.kind {
				t.Fatalf("%s %s = %d %.200s, want %d %s", tc.c.method, tc.c.path, r.status, r.text, tc.status, tc.kind)
			}
		})
	}
	state := k.do(call{"GET", "/api/state", token, nil})
	if strings.Contains(state.text, `"id":"agent.x"`) || !strings.Contains(state.text, pending.str("approvalId")) {
		t.Fatalf("bad input changed the state: %.400s", state.text)
	}
	events := k.do(call{"GET", "/api/events?limit=1000", token, nil})
	for _, typ := range []string{"judge/submitted", "judge/pending"} {
		if !strings.Contains(events.text, `"type":"`+typ+`"`) {
			t.Fatalf("event log lacks %s", typ)
		}
	}
}
