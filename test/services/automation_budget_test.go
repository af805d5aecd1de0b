package services

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline/budget"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/automation"
	"github.com/sms-baseline/sms/plugins/orm"
)

// TestAgentAutomationIsBudgeted: an agent plugin's automation whose
// action is a write the plugin declared (no code of its runs) is one of
// the plugin's calls: the rows it writes count against the plugin and
// the person who asked for it, and once the plugin is over budget its
// runs are refused, naming the budget, while writes to the model go on.
// Seen failing with the automation acting without ActFor (no rows
// counted, the second run wrote).
func TestAgentAutomationIsBudgeted(t *testing.T) {
	payer := map[string]any{"id": "agent.payer", "version": "1", "scopes": []string{"db.write"}, "contributes": map[string]any{automation.Point: []any{
		map[string]any{"name": "payer", "model": "invoice", "trigger": "write", "watch": []string{"amount"},
			"action": map[string]any{"kind": "write", "values": map[string]any{"state": "paid"}}}}}}
	e := boot(t, options{budget: budget.Config{Limits: contracts.BudgetLimits{Plugin: contracts.Usage{Rows: 1}}},
		turns: [][]contracts.Block{
			{toolUse("plugin_define", map[string]any{"manifest": payer, "code": "export default async function activate(cap) {}"})},
			text("defined"),
		}})
	cleo := e.user("cleo", "clerks")
	first, second := e.create(cleo, map[string]any{"number": "C-1"}), e.create(cleo, map[string]any{"number": "C-2"})
	if r := e.Do("POST", "/api/chat", map[string]any{"session": "s", "text": "mark invoices paid"}, cleo); r.Status != 200 || !strings.Contains(string(r.Body), `\"mounted\"`) {
		t.Fatalf("define: %d %s", r.Status, r.Body)
	}
	e.write(cleo, first, map[string]any{"amount": 3})
	if st := e.statuses()["payer"]; st.Runs != 1 || st.Failures != 0 {
		t.Fatalf("first run: %+v, want one run that wrote", st)
	}
	var report adminv1.Budget
	if r := e.Do("GET", adminv1.RouteBudget, nil, bearer(token)); r.Status != 200 || json.Unmarshal(r.Body, &report) != nil {
		t.Fatalf("budget: %d %s", r.Status, r.Body)
	}
	if report.Plugins["agent.payer"].Rows != 1 || report.Users["user:cleo"].Rows < 1 {
		t.Fatalf("budget %+v: want agent.payer's one row counted against it and cleo", report)
	}
	e.write(cleo, second, map[string]any{"amount": 4})
	st := e.statuses()["payer"]
	if st.Failures != 1 || !strings.Contains(st.LastError, "plugin:agent.payer used 1 of its 1 rows written") {
		t.Fatalf("second run: %+v, want refused naming agent.payer's budget", st)
	}
	recs, err := e.ormService().Read(orm.Sudo(context.Background()), "invoice", []int64{second}, orm.ReadSpec{"state": nil})
	if err != nil || recs[0]["state"] != "draft" {
		t.Fatalf("the second invoice is %v (%v), want left a draft", recs, err)
	}
}
