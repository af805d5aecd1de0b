package agentloop

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// scopedKernel is a kernel server with the admin token and a credential
// "carol" holding read and chat, whose agent replays turns.
func scopedKernel(t *testing.T, exec func(*testing.T) kernel.Executor, turns ...[]contracts.Block) *baseline.Baseline {
	t.Helper()
	b, err := baseline.New(context.Background(), baseline.Options{Name: "scopes", Executor: exec(t), Model: record(turns...),
		AdminToken:  "admin-token",
		Credentials: []smshttp.Credential{{Name: "carol", Token: "chat-token", Scopes: []smshttp.Scope{smshttp.ScopeRead, smshttp.ScopeChat}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// caller is one credential of a kernel.
type caller struct {
	b     *baseline.Baseline
	token string
}

// do sends route ("METHOD /path") with a JSON body as the caller and
// returns the status and body.
func (c caller) do(t *testing.T, route string, body any) (int, string) {
	t.Helper()
	b, token := c.b, c.token
	method, path, _ := strings.Cut(route, " ")
	raw, _ := json.Marshal(body)
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	b.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// step runs one chat turn as token and returns its only tool step.
func step(t *testing.T, b *baseline.Baseline, token, text string) (result string, isError bool) {
	t.Helper()
	status, body := caller{b, token}.do(t, "POST /api/chat", map[string]string{"session": "s", "text": text})
	var r reply
	if status != http.StatusOK || json.Unmarshal([]byte(body), &r) != nil || len(r.Steps) != 1 {
		t.Fatalf("chat %q = %d %s, want one tool step", text, status, body)
	}
	return r.Steps[0].Result, r.Steps[0].IsError
}

// What a person with the admin scope decided, an agent driven by a
// credential without it cannot undo: after an admin disables a plugin over
// REST, carol's agent (read and chat) can neither enable it with
// plugin_enable, nor uninstall it, nor define it anew (nor can carol
// resubmit it over REST); the refusals name the admin scope. A disable
// carol's agent made is its own to undo, and an admin's agent enables
// what an admin disabled. Runs on both executors.
// Seen failing without the fix: plugin_enable answered the plugin enabled
// and active after the admin's disable (agent tools without the caller's
// scopes); and, with only the admin API's check removed, carol's REST
// resubmission answered 200 mounted.
func TestAgentCannotUndoAnAdminsDisable(t *testing.T) {
	for _, e := range cases {
		t.Run(e.Name, func(t *testing.T) {
			id := map[string]any{"id": "agent.doubler"}
			b := scopedKernel(t, e.Plain,
				defineDoubler(), text("defined"),
				[]contracts.Block{toolUse("plugin_enable", id)}, text("enabled?"),
				[]contracts.Block{toolUse("plugin_uninstall", id)}, text("removed?"),
				defineDoubler(), text("defined again?"),
				[]contracts.Block{toolUse("plugin_enable", id)}, text("enabled"),
				[]contracts.Block{toolUse("plugin_disable", id)}, text("disabled"),
				[]contracts.Block{toolUse("plugin_enable", id)}, text("enabled again"),
			)
			if res, isErr := step(t, b, "chat-token", "define it"); isErr || !strings.Contains(res, `"mounted"`) {
				t.Fatalf("plugin_define = %s, want mounted", res)
			}
			if status, body := (caller{b, "admin-token"}).do(t, "POST /api/plugins/agent.doubler/disable", nil); status != http.StatusOK {
				t.Fatalf("the admin's disable = %d %s", status, body)
			}
			for _, text := range []string{"enable it", "remove it", "define it again"} {
				res, isErr := step(t, b, "chat-token", text)
				if !isErr || !strings.Contains(res, "disabled by an admin") || !strings.Contains(res, "admin scope") {
					t.Fatalf("%s as carol = %s (error %v), want a refusal naming the admin scope", text, res, isErr)
				}
			}
			status, body := caller{b, "chat-token"}.do(t, "POST /api/plugins", map[string]any{"manifest": map[string]any{
				"id": "agent.doubler", "version": "1", "points": []string{"tool"}}, "code": doublerCode})
			if status != http.StatusForbidden || !strings.Contains(body, "admin scope") {
				t.Fatalf("carol's resubmission over REST = %d %s, want 403 naming the admin scope", status, body)
			}
			if v, _ := b.Kernel.Fiber("agent.doubler"); v.Enabled || !v.Held {
				t.Fatalf("after carol's attempts the plugin is %+v, want disabled and held", v)
			}
			if res, isErr := step(t, b, "admin-token", "enable it"); isErr || !strings.Contains(res, `"enabled":true`) {
				t.Fatalf("plugin_enable as admin = %s, want enabled", res)
			}
			if res, isErr := step(t, b, "chat-token", "disable it"); isErr || !strings.Contains(res, `"enabled":false`) {
				t.Fatalf("plugin_disable as carol = %s, want disabled", res)
			}
			if res, isErr := step(t, b, "chat-token", "enable it again"); isErr || !strings.Contains(res, `"state":"active"`) {
				t.Fatalf("plugin_enable as carol after her own disable = %s, want enabled and active", res)
			}
		})
	}
}

// Each built-in tool needs the scope its admin API route needs: a
// credential holding only chat cannot list plugins through the agent
// (GET /api/state needs read), and the refusal names the scope.
// Seen failing without the fix: plugin_list answered the plugins.
func TestToolNeedsTheRoutesScope(t *testing.T) {
	b, err := baseline.New(context.Background(), baseline.Options{Name: "scopes",
		Model:       record([]contracts.Block{toolUse("plugin_list", map[string]any{})}, text("listed?")),
		Credentials: []smshttp.Credential{{Name: "dave", Token: "chat-only", Scopes: []smshttp.Scope{smshttp.ScopeChat}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	res, isErr := step(t, b, "chat-only", "list them")
	if !isErr || !strings.Contains(res, "plugin_list needs the read scope, which credential dave does not hold") {
		t.Fatalf("plugin_list as dave = %s (error %v), want a refusal naming the read scope", res, isErr)
	}
}
