package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

const doublerCode = `export default async function activate(cap) {
  await cap.contribute('tool', { name: 'double', description: 'doubles n',
    input_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    handler: async (i) => ({ doubled: i.n * 2 }) }) }`

// script writes a scripted model's turns to a file and returns its path.
func script(t *testing.T, turns ...[]map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(turns)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "turns.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func toolUse(name string, input any) map[string]any {
	return map[string]any{"type": "tool_use", "name": name, "input": input}
}

func define(id, code string) map[string]any {
	return toolUse("plugin_define", map[string]any{"manifest": map[string]any{"id": id, "version": "1", "points": points(code)}, "code": code})
}

// stepResults returns the results of a chat reply's steps, by tool name.
func stepResults(r reply) map[string]string {
	out := map[string]string{}
	steps, _ := r.json["steps"].([]any)
	for _, s := range steps {
		m, _ := s.(map[string]any)
		name, _ := m["tool"].(string)
		res, _ := json.Marshal(m["result"])
		out[name] += string(res)
	}
	return out
}

// The agent defines a tool in chat, calls it, and answers; the plugin is
// restored after a restart and a new chat can call it; disabling it takes
// the tool away from the next turn.
func TestChatDefinesAToolThatSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	store := "sqlite:" + filepath.Join(dir, "kernel.db")
	first := script(t,
		[]map[string]any{text("Adding a doubler."), define("agent.doubler", doublerCode)},
		[]map[string]any{toolUse("double", map[string]any{"n": 21})},
		[]map[string]any{text("21 doubled is 42.")})
	k := start(t, "--store", store, "--executor", "goja", "--model", "scripted", "--model-script", first)
	r := k.do(call{"POST", "/api/chat", "", map[string]string{"session": "s1", "text": "double 21 with a new tool"}})
	if r.str("reply") != "21 doubled is 42." || !strings.Contains(stepResults(r)["double"], "42") {
		t.Fatalf("chat = %d %s, want the reply and a double step returning 42", r.status, r.text)
	}
	if s := k.do(call{"GET", "/api/state", "", nil}); !strings.Contains(s.text, `"id":"agent.doubler"`) {
		t.Fatalf("state lacks the plugin defined in chat: %.300s", s.text)
	}
	events := k.do(call{"GET", "/api/events?limit=1000", "", nil}).text
	for _, typ := range []string{"chat/turn", "judge/submitted", "judge/mounted"} {
		if !strings.Contains(events, `"type":"`+typ+`"`) {
			t.Fatalf("event log lacks %s", typ)
		}
	}
	k.stop()

	second := script(t,
		[]map[string]any{toolUse("double", map[string]any{"n": 5})},
		[]map[string]any{text("10.")},
		[]map[string]any{toolUse("double", map[string]any{"n": 6})},
		[]map[string]any{text("gone")})
	k = start(t, "--store", store, "--executor", "goja", "--model", "scripted", "--model-script", second)
	if r := k.do(call{"POST", "/api/chat", "", map[string]string{"session": "s2", "text": "double 5"}}); !strings.Contains(stepResults(r)["double"], "10") {
		t.Fatalf("after restart the restored tool answered %s", r.text)
	}
	if r := k.do(call{"POST", "/api/plugins/agent.doubler/disable", "", nil}); r.status != 200 {
		t.Fatalf("disable = %d %s", r.status, r.text)
	}
	if r := k.do(call{"POST", "/api/chat", "", map[string]string{"session": "s2", "text": "double 6"}}); !strings.Contains(stepResults(r)["double"], `there is no tool \"double\"`) {
		t.Fatalf("after disabling, the double step = %s, want an error saying there is no such tool", r.text)
	}
	k.stop()
}

// A plugin defined in chat with a sensitive point waits for a human, and
// the turn streams as server-sent events.
func TestChatStreamWithPendingApproval(t *testing.T) {
	routeCode := `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/hi', handler: async () => ({ body: 'hi' }) }) }`
	turns := script(t,
		[]map[string]any{define("agent.hi", routeCode)},
		[]map[string]any{text("It needs your approval.")})
	k := start(t, "--store", "sqlite:"+filepath.Join(t.TempDir(), "k.db"), "--executor", "goja",
		"--model", "scripted", "--model-script", turns)
	resp, err := http.Post(k.url+"/api/chat/stream", "application/json", strings.NewReader(`{"session":"s","text":"add /hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var types []string
	_ = adminv1.ReadSSE(resp.Body, func(f adminv1.SSEFrame) error {
		var ev map[string]any
		if err := json.Unmarshal(f.Data, &ev); err != nil {
			t.Fatalf("frame %q is not JSON: %v", f.Data, err)
		}
		typ, _ := ev["type"].(string)
		types = append(types, typ)
		return nil
	})
	joined := strings.Join(types, ",")
	if !strings.Contains(joined, "verdict") || !strings.HasSuffix(joined, "done") {
		t.Fatalf("stream events = %s, want a verdict and a final done", joined)
	}
	approvals := k.do(call{"GET", "/api/approvals", "", nil})
	list, _ := approvals.json["approvals"].([]any)
	if len(list) != 1 {
		t.Fatalf("approvals = %s, want the chat's plugin pending", approvals.text)
	}
	if r := k.do(call{"GET", "/hi", "", nil}); r.status != 404 {
		t.Fatalf("the pending route answered %d before approval", r.status)
	}
	id, _ := list[0].(map[string]any)["id"].(string)
	hash, _ := list[0].(map[string]any)["codeHash"].(string)
	if r := k.do(call{"POST", "/api/approvals/" + id + "/approve", "", map[string]string{"by": "ada", "codeHash": hash}}); r.str("status") != "mounted" {
		t.Fatalf("approve = %s", r.text)
	}
	if r := k.do(call{"GET", "/hi", "", nil}); r.text != "hi" {
		t.Fatalf("after approval /hi = %d %q, want hi", r.status, r.text)
	}
	k.stop()
}
