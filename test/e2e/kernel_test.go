package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const token = "e2e-token"

// kernelArgs returns the flags of a kernel on a fresh SQLite file with a token.
func kernelArgs(t testing.TB, extra ...string) []string {
	t.Helper()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return append([]string{"--store", "sqlite:" + filepath.Join(dir, "data", "kernel.db"), "--admin-token-file", tokenFile}, extra...)
}

// plugin returns the JSON form of an agent plugin; code that contributes a
// route or a tool declares that point.
func plugin(id, code string) map[string]any {
	return map[string]any{"manifest": map[string]any{"id": id, "version": "1", "points": points(code)}, "code": code}
}

// points returns the points code contributes to, as its manifest declares them.
func points(code string) []string {
	out := []string{}
	for _, p := range []string{"route", "tool", "prompt", "schedule"} {
		if strings.Contains(code, "contribute('"+p+"'") {
			out = append(out, p)
		}
	}
	return out
}

const helloCode = `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/hello/:name',
    handler: async (req) => ({ body: { hello: req.params.name } }) })
}`

// The life of an agent route across restarts: pending, approved, mounted,
// served, still served after a restart, disabled (404) and still disabled
// after a restart, enabled again, uninstalled.
func TestAgentRouteAcrossRestarts(t *testing.T) {
	k := start(t, kernelArgs(t, "--executor", "isolated")...)
	v := k.do(call{"POST", "/api/plugins", token, plugin("agent.hello", helloCode)})
	if v.str("status") != "pending" {
		t.Fatalf("submit = %s, want pending (route is sensitive)", v.text)
	}
	approve := map[string]string{"by": "ada", "codeHash": v.str("codeHash")}
	if r := k.do(call{"POST", "/api/approvals/" + v.str("approvalId") + "/approve", token, approve}); r.str("status") != "mounted" {
		t.Fatalf("approve = %s, want mounted", r.text)
	}
	hello := call{"GET", "/hello/ada", "", nil}
	want := `{"hello":"ada"}`
	if r := k.do(hello); r.status != 200 || r.text != want {
		t.Fatalf("route = %d %s, want 200 %s", r.status, r.text, want)
	}
	k = k.restart()
	if r := k.do(hello); r.text != want {
		t.Fatalf("after restart the route = %d %s, want %s", r.status, r.text, want)
	}
	if r := k.do(call{"POST", "/api/plugins/agent.hello/disable", token, nil}); r.status != 200 {
		t.Fatalf("disable = %d %s", r.status, r.text)
	}
	if r := k.do(hello); r.status != 404 {
		t.Fatalf("disabled route = %d, want 404", r.status)
	}
	k = k.restart()
	if r := k.do(hello); r.status != 404 {
		t.Fatalf("after restart the disabled route = %d, want 404", r.status)
	}
	if r := k.do(call{"POST", "/api/plugins/agent.hello/enable", token, nil}); r.status != 200 || k.do(hello).text != want {
		t.Fatalf("enable = %d %s, then the route must answer again", r.status, r.text)
	}
	if r := k.do(call{"DELETE", "/api/plugins/agent.hello", token, nil}); r.status != 200 {
		t.Fatalf("uninstall = %d %s", r.status, r.text)
	}
	if s := k.do(call{"GET", "/api/state", token, nil}); strings.Contains(s.text, "agent.hello") {
		t.Fatalf("state still lists the uninstalled plugin: %.300s", s.text)
	}
	k.stop()
}
