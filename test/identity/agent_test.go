package identity

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/auth"
	"github.com/sms-baseline/sms/plugins/orm"
)

// allInvoices is an agent plugin whose tool lists every invoice it can.
const allInvoices = `export default async function activate(cap) {
  await cap.contribute('tool', { name: 'all_invoices', description: 'every invoice',
    input_schema: { type: 'object', properties: {} },
    handler: async () => ({ ids: await cap.invoke('orm-user', 'search', 'invoice', []),
      me: (await cap.invoke('identity', 'whoami')).login }) })
}`

func toolUse(name string, input any) contracts.Block {
	raw, _ := json.Marshal(input)
	return contracts.Block{Type: contracts.BlockToolUse, Name: name, Input: raw}
}

func text(s string) []contracts.Block { return []contracts.Block{{Type: contracts.BlockText, Text: s}} }

// chat sends one turn and returns its reply.
func (e *env) chat(h http.Header, session, msg string) adminv1.ChatReply {
	e.t.Helper()
	r := e.Do("POST", adminv1.RouteChat, map[string]any{"session": session, "text": msg}, h)
	var reply adminv1.ChatReply
	if r.Status != 200 || json.Unmarshal(r.Body, &reply) != nil {
		e.t.Fatalf("chat %q: %d %s", msg, r.Status, r.Body)
	}
	return reply
}

// The agent acts as its user: a clerk who may read only their own
// invoices asks for a tool that lists all invoices; it mounts, and run in
// the clerk's turn it answers only the clerk's invoice, while run in an
// admin's turn it answers both; identity.whoami names each. The
// submission names the clerk.
// Seen failing with the clerks' rule left out of the policy (the clerk's
// turn answered both ids), and with the ORM's ContextOf anonymous (the
// clerk could not even create an invoice: "anonymous callers may not
// create invoice").
func TestAgentActsAsItsUser(t *testing.T) {
	opts := auth.Options{Bootstrap: &auth.Bootstrap{Login: rootLogin, Password: rootPassword}, Hash: baselinetest.FastHash}
	e := &env{t: t, Env: baselinetest.New(t, baselinetest.Options{Approvals: true, Auth: &opts, AdminToken: token,
		Plugins: []kernel.Plugin{invoicing(), invoicingAccess()},
		Turns: [][]contracts.Block{
			{toolUse("plugin_define", map[string]any{"manifest": map[string]any{"id": "agent.allinv", "version": "1",
				"inject": []string{orm.UserKey, auth.IdentityKey}, "points": []string{"tool"}}, "code": allInvoices})},
			text("defined"),
			{toolUse("all_invoices", map[string]any{})},
			text("listed for cleo"),
			{toolUse("all_invoices", map[string]any{})},
			text("listed for root"),
		}})}
	cleo, carl := e.user("cleo", "clerks"), e.user("carl", "clerks")
	for _, c := range []struct {
		h      http.Header
		number string
	}{{cleo, "C-1"}, {carl, "K-1"}} {
		if r := e.Do("POST", "/api/orm/invoice/create", map[string]any{"values": map[string]any{"number": c.number}}, c.h); r.Status != 201 {
			t.Fatalf("create %s: %d %s", c.number, r.Status, r.Body)
		}
	}
	if r := e.chat(cleo, "s", "make a tool that lists all invoices"); len(r.Steps) != 1 || !strings.Contains(r.Steps[0].Result, `"mounted"`) {
		t.Fatalf("define: %+v", r)
	}
	r := e.chat(cleo, "s", "list all invoices")
	if len(r.Steps) != 1 || r.Steps[0].IsError || r.Steps[0].Result != `{"ids":[1],"me":"cleo"}` {
		t.Fatalf("cleo's all_invoices: %+v, want only invoice 1", r.Steps)
	}
	r = e.chat(e.Login(rootLogin, rootPassword), "s", "list all invoices")
	if len(r.Steps) != 1 || r.Steps[0].IsError || r.Steps[0].Result != `{"ids":[1,2],"me":"root"}` {
		t.Fatalf("root's all_invoices: %+v, want both invoices", r.Steps)
	}
	ev := e.Do("GET", "/api/events", nil, bearer(token))
	if !strings.Contains(string(ev.Body), `"requestedBy":"user:cleo"`) {
		t.Fatalf("the submission does not name cleo: %.2000s", ev.Body)
	}
}
