package orm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/scripted"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

// script is the scripted model of docs/examples: a chat that adds a
// discount field to invoices and a tool listing the overdue ones, then
// calls it.
func script(t *testing.T) [][]contracts.Block {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "scripted-invoices.json"))
	if err != nil {
		t.Fatal(err)
	}
	var turns [][]contracts.Block
	if err := json.Unmarshal(raw, &turns); err != nil {
		t.Fatalf("parse the script: %v", err)
	}
	return turns
}

// server is one boot of the kernel server on the file at path.
type server struct {
	t *testing.T
	b *baseline.Baseline
}

func boot(t *testing.T, path string, exec kernel.Executor, turns [][]contracts.Block) *server {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.OpenStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := baseline.New(ctx, baseline.Options{Name: "orm", Store: st, AdminToken: adminToken, Credentials: credentials,
		Executor: exec, Model: scripted.New(turns), ORM: orm.Options{ContextOf: contextOf}, Plugins: []kernel.Plugin{invoicesApp()}})
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	return &server{t: t, b: b}
}

func (s *server) close() {
	if err := s.b.Close(); err != nil {
		s.t.Errorf("close: %v", err)
	}
}

// do sends a JSON request with a bearer token and decodes the answer.
func (s *server) do(method, path, token string, body any) (int, map[string]any) {
	s.t.Helper()
	raw, _ := json.Marshal(body)
	r := httptest.NewRequest(method, path, bytes.NewReader(raw))
	if body == nil {
		r = httptest.NewRequest(method, path, nil)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	s.b.ServeHTTP(w, r)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

func (s *server) must(method, path, token string, body any) map[string]any {
	s.t.Helper()
	status, out := s.do(method, path, token, body)
	if status >= 300 {
		s.t.Fatalf("%s %s = %d %v", method, path, status, out)
	}
	return out
}

// overdue asks the agent, as alice, which invoices are overdue and returns
// what its tool answered.
func (s *server) overdue() string {
	s.t.Helper()
	out := s.must("POST", "/api/chat", aliceToken, map[string]string{"session": "s2", "text": "which invoices are overdue?"})
	steps, _ := out["steps"].([]any)
	if len(steps) != 1 {
		s.t.Fatalf("chat steps = %v, want one tool call", out)
	}
	step := steps[0].(map[string]any)
	if step["tool"] != "overdue_invoices" || step["isError"] == true {
		s.t.Fatalf("chat step = %v, want overdue_invoices to answer", step)
	}
	return step["result"].(string)
}

// wantOverdue checks the tool's answer: alice's overdue invoices with
// their discount, and never Hidden Corp's.
func wantOverdue(t *testing.T, got string) {
	t.Helper()
	var recs []map[string]any
	if err := json.Unmarshal([]byte(got), &recs); err != nil {
		t.Fatalf("tool result %q: %v", got, err)
	}
	want := `[{"discount":10,"id":1,"number":"INV-1","total":100},{"discount":0,"id":5,"number":"INV-5","total":30}]`
	if raw, _ := json.Marshal(recs); string(raw) != want {
		t.Fatalf("overdue invoices = %s, want %s", raw, want)
	}
}

// A chat adds a discount field to the invoice model a system plugin
// declares and a tool listing the overdue invoices through orm-user. The
// field waits for a person; once approved, the tool answers as alice (who
// cannot see Hidden Corp's invoice); both survive a restart; disabling the
// plugin keeps the field's data in its column, and enabling brings it back.
// It runs on both executors.
func TestChatAddsDiscountAndOverdueTool(t *testing.T) {
	for _, x := range cases {
		t.Run(x.Name, func(t *testing.T) { chatScenario(t, x.Plain) })
	}
}

func chatScenario(t *testing.T, executor func(*testing.T) kernel.Executor) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kernel.db")
	turns := script(t)
	s := boot(t, path, executor(t), turns)
	v, err := s.b.Kernel.GetValue(orm.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := seed(ctx, v.(orm.Service)); err != nil {
		t.Fatal(err)
	}

	out := s.must("POST", "/api/chat", aliceToken, map[string]string{"session": "s1", "text": "add a discount field to invoices and a tool that lists the overdue ones"})
	if raw, _ := json.Marshal(out); !strings.Contains(string(raw), "pending") {
		t.Fatalf("chat = %s, want the plugin pending approval", raw)
	}
	if cols, _ := s.b.Store.Database().Columns(ctx, "m_invoice"); slices.Contains(cols, "discount") {
		t.Fatalf("the discount column exists while its plugin waits for approval: %v", cols)
	}
	approvals := s.must("GET", "/api/approvals", adminToken, nil)["approvals"].([]any)
	if len(approvals) != 1 {
		t.Fatalf("approvals = %v, want one", approvals)
	}
	a := approvals[0].(map[string]any)
	s.must("POST", "/api/approvals/"+a["id"].(string)+"/approve", adminToken, map[string]any{"codeHash": a["codeHash"]})
	s.must("POST", "/api/orm/invoice/write", adminToken, map[string]any{"ids": []int{1}, "values": map[string]any{"discount": 10}})
	wantOverdue(t, s.overdue())
	s.close()

	s = boot(t, path, executor(t), turns[2:])
	wantOverdue(t, s.overdue())

	s.must("POST", "/api/plugins/agent.discounts/disable", adminToken, nil)
	if status, out := s.do("POST", "/api/orm/invoice/read", adminToken, map[string]any{"ids": []int{1}, "spec": []string{"discount"}}); status != http.StatusBadRequest {
		t.Fatalf("read discount while disabled = %d %v, want 400", status, out)
	}
	rows, err := s.b.Store.Database().Query(ctx, `SELECT "discount" AS "d" FROM "m_invoice" WHERE "number" = ?`, "INV-1")
	if err != nil || len(rows) != 1 || rows[0]["d"] != 10.0 {
		t.Fatalf("discount column while disabled: %v, %v; want 10", rows, err)
	}
	s.must("POST", "/api/plugins/agent.discounts/enable", adminToken, nil)
	recs := s.must("POST", "/api/orm/invoice/read", adminToken, map[string]any{"ids": []int{1}, "spec": []string{"discount"}})
	if raw, _ := json.Marshal(recs); string(raw) != `{"records":[{"discount":10,"id":1}]}` {
		t.Fatalf("discount after enable = %s", raw)
	}
	s.close()
}
