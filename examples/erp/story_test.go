package erp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/examples/erp"
	"github.com/sms-baseline/sms/plugins/agentloop"
	"github.com/sms-baseline/sms/plugins/auth"
	"github.com/sms-baseline/sms/plugins/automation"
	"github.com/sms-baseline/sms/plugins/orm"
)

const (
	adminToken   = "erp-admin-token"
	rootLogin    = "root"
	rootPassword = "root-password-long-enough"
)

// story is a scripted model's turns: story.json, a chat that adds a
// discount field to invoices and a tool listing the overdue ones, then
// calls it; story-after-restart.json, two chats calling the tool.
func story(t *testing.T, file string) [][]contracts.Block {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var turns [][]contracts.Block
	if err := json.Unmarshal(raw, &turns); err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	return turns
}

// erpEnv is one start of the ERP's kernel on the database at path.
type erpEnv struct {
	*baselinetest.Env
	t *testing.T
}

func start(t *testing.T, path string, turns [][]contracts.Block) *erpEnv {
	t.Helper()
	st, err := sqlite.OpenStore(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	e := baselinetest.New(t, baselinetest.Options{Approvals: true, Plugins: erp.Plugins(), Store: st, AdminToken: adminToken, Turns: turns,
		Services: baseline.Services,
		Auth:     &auth.Options{Bootstrap: &auth.Bootstrap{Login: rootLogin, Password: rootPassword}, Hash: baselinetest.FastHash}})
	return &erpEnv{Env: e, t: t}
}

// must sends a request and fails the test on an answer past 299.
func (e *erpEnv) must(method, path string, body any, h http.Header) map[string]any {
	e.t.Helper()
	r := e.Do(method, path, body, h)
	if r.Status >= 300 {
		e.t.Fatalf("%s %s = %d %s", method, path, r.Status, r.Body)
	}
	out, _ := r.JSON.(map[string]any)
	return out
}

// user creates a user in groups, as root, and signs them in.
func (e *erpEnv) user(login string, groups ...string) http.Header {
	e.t.Helper()
	return e.User(e.Login(rootLogin, rootPassword), login, login+"-password", groups...)
}

// invoice is a posted invoice of one line.
type invoice struct {
	number, due string
	qty, price  float64
}

// create creates the invoice as the user h signs in.
func (e *erpEnv) create(h http.Header, inv invoice) {
	e.t.Helper()
	out := e.must("POST", "/api/orm/invoice/create", map[string]any{"values": map[string]any{
		"number": inv.number, "due": inv.due, "state": "posted", "customer": 1}}, h)
	e.must("POST", "/api/orm/invoice_line/create", map[string]any{"values": map[string]any{
		"invoice": out["id"], "product": 1, "quantity": inv.qty, "price": inv.price}}, h)
}

// overdue asks the agent, as the user h signs in, which invoices are
// overdue, and returns what its tool answered.
func (e *erpEnv) overdue(h http.Header) string {
	e.t.Helper()
	out := e.must("POST", "/api/chat", map[string]string{"session": "s2", "text": "which invoices are overdue?"}, h)
	steps, _ := out["steps"].([]any)
	if len(steps) != 1 {
		e.t.Fatalf("chat = %v, want one tool call", out)
	}
	step := steps[0].(map[string]any)
	if step["tool"] != "overdue_invoices" || step["isError"] == true {
		e.t.Fatalf("chat step = %v, want overdue_invoices to answer", step)
	}
	return step["result"].(string)
}

// The seed's story on the example ERP: Sam, in sales, asks the agent for
// a discount field on invoices and a tool listing the overdue ones. The
// field waits for a person; once approved, the tool answers with Sam's
// invoices only (Sue's overdue invoice stays hers); both survive a
// restart; disabling the agent's plugin takes the field out of the API
// and the tool away from the agent, and keeps the column's data.
// Seen failing with the "own invoices" rule made open (Sam counted Sue's
// invoice).
func TestStory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "erp.db")
	e := start(t, path, story(t, "story.json"))
	sam, sue, alex := e.user("sam", erp.GroupSales), e.user("sue", erp.GroupSales), e.user("alex", erp.GroupAccountant)
	e.create(sam, invoice{"INV-S1", "2026-05-01", 2, 100})
	e.create(sam, invoice{"INV-S2", "2026-07-01", 1, 50})
	e.create(sue, invoice{"INV-U1", "2026-04-01", 3, 10})
	for who, c := range map[string]struct {
		h    http.Header
		want float64
	}{"sam": {sam, 2}, "sue": {sue, 1}, "alex": {alex, 3}} {
		if got := e.must("GET", erp.RouteSummary, nil, c.h)["invoices"]; got != c.want {
			t.Errorf("%s's summary counts %v invoices, want %v", who, got, c.want)
		}
	}

	out := e.must("POST", "/api/chat", map[string]string{"session": "s1",
		"text": "add a discount field to invoices and a tool that lists the overdue ones"}, sam)
	if raw, _ := json.Marshal(out); !strings.Contains(string(raw), "pending") {
		t.Fatalf("chat = %s, want the plugin pending approval", raw)
	}
	admin := http.Header{"Authorization": {"Bearer " + adminToken}}
	e.approve(admin)
	e.must("POST", "/api/orm/invoice/write", map[string]any{"ids": []int{1}, "values": map[string]any{"discount": 10}}, sam)
	const want = `[{"discount":10,"id":1,"number":"INV-S1","total":200}]`
	if got := e.overdue(sam); got != want {
		t.Fatalf("Sam's overdue invoices = %s, want %s", got, want)
	}

	// An automation thanking the customer when an invoice is paid waits
	// for a person too; once approved, paying posts the note, next to the
	// message that tracks the state.
	out = e.must("POST", "/api/chat", map[string]string{"session": "s3", "text": "when an invoice is paid, thank the customer"}, sam)
	if raw, _ := json.Marshal(out); !strings.Contains(string(raw), "pending") {
		t.Fatalf("chat = %s, want the automation pending approval", raw)
	}
	e.approve(admin)
	e.must("POST", "/api/orm/invoice/write", map[string]any{"ids": []int{2}, "values": map[string]any{"state": "paid"}}, sam)
	if got := e.thread(sam, 2); !slices.Contains(got, "note: Paid. Thank you, we have sent the customer a receipt.") ||
		!slices.Contains(got, "tracking: state: posted → paid") {
		t.Fatalf("invoice 2's thread = %q, want the agent's note and the tracked state", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = start(t, path, story(t, "story-after-restart.json"))
	sam = e.Login("sam", "sam-password")
	if got := e.overdue(sam); got != want {
		t.Fatalf("after a restart, Sam's overdue invoices = %s, want %s", got, want)
	}
	tools := func() int {
		n := 0
		for _, c := range e.Kernel.Contributions(agentloop.ToolPoint) {
			if c.Fiber == "agent.discounts" {
				n++
			}
		}
		return n
	}
	if n := tools(); n != 1 {
		t.Fatalf("the agent's plugin gives the agent %d tools, want overdue_invoices", n)
	}
	e.must("POST", "/api/plugins/agent.discounts/disable", nil, admin)
	if r := e.Do("POST", "/api/orm/invoice/read", map[string]any{"ids": []int{1}, "spec": []string{"discount"}}, sam); r.Status != http.StatusBadRequest {
		t.Errorf("read the discount of a disabled plugin = %d %s, want 400", r.Status, r.Body)
	}
	if n := tools(); n != 0 {
		t.Errorf("the disabled plugin still gives the agent %d tools", n)
	}
	rows, err := e.Store.Database().Query(context.Background(), `SELECT "discount" AS "d" FROM "m_invoice" WHERE "number" = ?`, "INV-S1")
	if err != nil || len(rows) != 1 || rows[0]["d"] != 10.0 {
		t.Errorf("the discount column while disabled: %v, %v; want 10 kept", rows, err)
	}
	if cols, _ := e.Store.Database().Columns(context.Background(), orm.Table(erp.Invoice)); !slices.Contains(cols, "discount") {
		t.Errorf("columns of invoices = %v, want discount kept", cols)
	}
}

// approve approves the one pending approval, bound to its code hash.
func (e *erpEnv) approve(admin http.Header) {
	e.t.Helper()
	approvals, _ := e.must("GET", "/api/approvals", nil, admin)["approvals"].([]any)
	if len(approvals) != 1 {
		e.t.Fatalf("approvals = %v, want one", approvals)
	}
	a := approvals[0].(map[string]any)
	e.must("POST", "/api/approvals/"+a["id"].(string)+"/approve", map[string]any{"codeHash": a["codeHash"]}, admin)
}

// thread is a record's messages, "kind: body", newest first, once the
// agent's automations are done.
func (e *erpEnv) thread(h http.Header, id int) []string {
	e.t.Helper()
	v, err := e.Kernel.GetValue(automation.Key)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := v.(automation.Service).Idle(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	var out []string
	msgs, _ := e.must("GET", fmt.Sprintf("/api/audit/invoice/%d", id), nil, h)["messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		out = append(out, fmt.Sprint(mm["kind"], ": ", mm["body"]))
	}
	return out
}
