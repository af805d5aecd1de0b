package erp_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The ERP's screens and services as a front end uses them: one
// /api/rpc/meta batch for the menu and the invoice list's view, one
// /api/rpc batch for the rows and their count (the batch of
// docs/applications.md), and the ERP's own automation noting an invoice
// that is posted. Seen failing with the screens plugin left out of
// Plugins (the meta batch answered no menu).
func TestScreens(t *testing.T) {
	e := start(t, filepath.Join(t.TempDir(), "erp.db"), nil)
	sam := e.user("sam", "sales")
	e.create(sam, invoice{"INV-S1", "2026-05-01", 2, 100})

	r := e.Do("POST", "/api/rpc/meta", []any{
		map[string]any{"jsonrpc": "2.0", "id": "menu", "method": "menus"},
		map[string]any{"jsonrpc": "2.0", "id": "list", "method": "view", "params": []any{"invoice", "list"}},
	}, sam)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"name":"sales.unpaid","label":"Unpaid","action":"invoices.unpaid","model":"invoice"`) ||
		!strings.Contains(string(r.Body), `"fields":[{"name":"number"},{"name":"customer"},{"name":"due"},{"name":"state"},{"name":"total"}]`) {
		t.Fatalf("meta batch: %d %s", r.Status, r.Body)
	}
	r = e.Do("POST", "/api/rpc", []any{
		map[string]any{"jsonrpc": "2.0", "id": 1, "method": "search_read", "params": []any{"invoice",
			[]any{[]any{"state", "=", "posted"}}, []string{"number", "customer", "due", "state", "total"}, map[string]any{"order": "due", "limit": 50}}},
		map[string]any{"jsonrpc": "2.0", "id": 2, "method": "count", "params": []any{"invoice", []any{[]any{"state", "=", "posted"}}}},
	}, sam)
	var answers []map[string]any
	if r.Status != 200 || json.Unmarshal(r.Body, &answers) != nil || len(answers) != 2 || answers[1]["result"] != 1.0 ||
		!strings.Contains(string(r.Body), `"number":"INV-S1"`) {
		t.Fatalf("rpc batch: %d %s", r.Status, r.Body)
	}

	out := e.must("POST", "/api/orm/invoice/create", map[string]any{"values": map[string]any{"number": "INV-S2", "customer": 1}}, sam)
	id := int(out["id"].(float64))
	e.must("POST", "/api/orm/invoice/write", map[string]any{"ids": []int{id}, "values": map[string]any{"state": "posted"}}, sam)
	if got := e.thread(sam, id); !slices.Contains(got, "note: Posted: the customer can be sent this invoice.") ||
		!slices.Contains(got, "tracking: state: draft → posted") {
		t.Fatalf("the posted invoice's thread = %q", got)
	}
}
