package agentloop

import (
	"context"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/judge"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// defineNet is a turn that submits plugin id, which needs an approval (it
// declares the net scope).
func defineNet(id string) []contracts.Block {
	return []contracts.Block{toolUse("plugin_define", map[string]any{
		"manifest": map[string]any{"id": id, "version": "1", "points": []string{"tool"}, "scopes": []string{"net"}},
		"code":     doublerCode})}
}

// Each chat user is their own requester: with one pending approval allowed
// per requester, carol's agent and dave's each park one, recorded under
// their credential's name, and carol's second is refused naming her alone.
// Seen failing without the fix: dave's submission was rejected because
// "chat-agent already has 1 approvals waiting" (every chat user shared
// one requester).
func TestEachChatUserIsTheirOwnRequester(t *testing.T) {
	chatter := []smshttp.Scope{smshttp.ScopeRead, smshttp.ScopeChat}
	b, err := baseline.New(context.Background(), baseline.Options{Name: "requesters",
		Model:  record(defineNet("agent.a"), text("a"), defineNet("agent.b"), text("b"), defineNet("agent.c"), text("c")),
		Policy: judge.Policy{MaxPendingPerRequester: 1},
		Credentials: []smshttp.Credential{{Name: "carol", Token: "carol-token", Scopes: chatter},
			{Name: "dave", Token: "dave-token", Scopes: chatter}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	for _, token := range []string{"carol-token", "dave-token"} {
		if res, isErr := step(t, b, token, "define it"); isErr || !strings.Contains(res, `"pending"`) {
			t.Fatalf("plugin_define as %s = %s, want pending", token, res)
		}
	}
	res, _ := step(t, b, "carol-token", "define another")
	if !strings.Contains(res, "carol already has 1 approvals waiting") {
		t.Fatalf("carol's second plugin_define = %s, want a refusal naming carol's limit", res)
	}
	v, err := b.Kernel.GetValue(judge.Key)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]string{}
	for _, a := range v.(judge.Service).Pending() {
		by[a.PluginID] = a.RequestedBy
	}
	if len(by) != 2 || by["agent.a"] != "carol" || by["agent.b"] != "dave" {
		t.Fatalf("pending approvals by plugin = %v, want agent.a by carol and agent.b by dave", by)
	}
}
