package ormtest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/plugins/orm"
)

// lines reads an invoice's line products and its tag names.
func (e *Env) lines(t *testing.T, inv int64) string {
	t.Helper()
	recs, err := e.ORM.Read(Sudo(), "invoice", []int64{inv}, orm.ReadSpec{"lines": {"product": nil}, "tags": {"name": nil}, "total": nil})
	if err != nil {
		t.Fatalf("read invoice %d: %v", inv, err)
	}
	var b strings.Builder
	for _, l := range recs[0]["lines"].([]any) {
		b.WriteString(l.(orm.Record)["product"].(string) + " ")
	}
	b.WriteString("|")
	for _, tg := range recs[0]["tags"].([]any) {
		b.WriteString(" " + tg.(orm.Record)["name"].(string))
	}
	return b.String() + " | " + Show(recs[0]["total"])
}

func testWriteCommands(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{})
	e.Seed(t)
	inv2, urgent, big := e.ID("invoice", "INV-2"), e.ID("tag", "urgent"), e.ID("tag", "big")
	steps := []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"total": 1.5}, "B widget C gadget | urgent big | 1.5"},
		{map[string]any{"lines": []any{map[string]any{"op": "create", "values": map[string]any{"product": "D"}}}}, "B widget C gadget D | urgent big | 1.5"},
		{map[string]any{"lines": []any{map[string]any{"op": "update", "id": 2, "values": map[string]any{"product": "B2"}}}}, "B2 C gadget D | urgent big | 1.5"},
		{map[string]any{"lines": []any{map[string]any{"op": "delete", "id": 3}}}, "B2 D | urgent big | 1.5"},
		{map[string]any{"tags": []any{map[string]any{"op": "unlink", "id": urgent}}}, "B2 D | big | 1.5"},
		{map[string]any{"tags": []any{map[string]any{"op": "link", "id": urgent}}}, "B2 D | urgent big | 1.5"},
		{map[string]any{"tags": []any{big}}, "B2 D | big | 1.5"},
		{map[string]any{"tags": []any{map[string]any{"op": "set", "ids": []any{}}}}, "B2 D | | 1.5"},
		{map[string]any{"tags": []any{map[string]any{"op": "create", "values": map[string]any{"name": "new"}}}}, "B2 D | new | 1.5"},
		{map[string]any{"lines": []any{map[string]any{"op": "link", "id": 1}}}, "A B2 D | new | 1.5"},
		{map[string]any{"lines": []any{map[string]any{"op": "set", "ids": []any{1, 2, 5}}}, "total": nil}, "A B2 D | new | null"},
	}
	for i, s := range steps {
		if err := e.ORM.Write(Sudo(), "invoice", []int64{inv2}, s.values); err != nil {
			t.Fatalf("step %d write %s: %v", i+1, Show(s.values), err)
		}
		if got := e.lines(t, inv2); got != s.want {
			t.Fatalf("step %d after write %s: %q, want %q", i+1, Show(s.values), got, s.want)
		}
	}
	// The inverse of lines is required: unlinking a line is refused.
	err := e.ORM.Write(Sudo(), "invoice", []int64{inv2}, map[string]any{"lines": []any{map[string]any{"op": "unlink", "id": 1}}})
	if !errors.Is(err, orm.ErrInvalid) || !strings.Contains(err.Error(), "invoice_line.invoice is required") {
		t.Fatalf("unlink a line with a required inverse: %v", err)
	}
	err = e.ORM.Write(Sudo(), "invoice", []int64{inv2}, map[string]any{"lines": []any{map[string]any{"op": "update", "id": 4, "values": map[string]any{"product": "x"}}}})
	if !errors.Is(err, orm.ErrInvalid) || !strings.Contains(err.Error(), "is not one of record") {
		t.Fatalf("update a line of another invoice: %v", err)
	}
	for _, bad := range []any{"x", []any{map[string]any{"op": "fly"}}, []any{map[string]any{"op": "link"}}, []any{map[string]any{"op": "create"}}} {
		if err := e.ORM.Write(Sudo(), "invoice", []int64{inv2}, map[string]any{"tags": bad}); !errors.Is(err, orm.ErrInvalid) ||
			!strings.Contains(err.Error(), "model invoice field tags") {
			t.Errorf("tags %s: %v, want ErrInvalid naming invoice.tags", Show(bad), err)
		}
	}
}

// testWriteAtomic: a write whose last x2many command fails applies
// nothing, not its plain values and not its earlier commands. Seen
// failing with the transaction in Write replaced by direct statements.
func testWriteAtomic(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{})
	e.Seed(t)
	inv1 := e.ID("invoice", "INV-1")
	before := e.lines(t, inv1)
	err := e.ORM.Write(Sudo(), "invoice", []int64{inv1}, map[string]any{
		"total": 9.0,
		"lines": []any{map[string]any{"op": "create", "values": map[string]any{"product": "new"}}},
		"tags": []any{
			map[string]any{"op": "create", "values": map[string]any{"name": "t"}},
			map[string]any{"op": "link", "id": 999},
		},
	})
	if !errors.Is(err, orm.ErrInvalid) || !strings.Contains(err.Error(), "tag record 999 does not exist") {
		t.Fatalf("write linking a missing tag: %v", err)
	}
	if after := e.lines(t, inv1); after != before {
		t.Fatalf("after the failed write the invoice is %q, want it unchanged: %q", after, before)
	}
	n, err := e.ORM.Count(Sudo(), "tag", orm.Domain{[]any{"name", "=", "t"}})
	if err != nil || n != 0 {
		t.Fatalf("tags created by the failed write: %d, %v; want 0", n, err)
	}
	_, err = e.ORM.Create(Sudo(), "invoice", map[string]any{"number": "NEW",
		"lines": []any{map[string]any{"op": "create", "values": map[string]any{"product": "p", "qty": "many"}}}})
	if !errors.Is(err, orm.ErrInvalid) {
		t.Fatalf("create with a bad line: %v", err)
	}
	if n, _ := e.ORM.Count(Sudo(), "invoice", orm.Domain{[]any{"number", "=", "NEW"}}); n != 0 {
		t.Fatalf("the failed create left %d invoices", n)
	}
}

func testUnlink(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{})
	e.Seed(t)
	acme := e.ID("contact", "Acme")
	err := e.ORM.Unlink(Sudo(), "contact", []int64{acme})
	var oe *orm.Error
	if !errors.Is(err, orm.ErrConflict) || !errors.As(err, &oe) || oe.Model != "invoice" || oe.Field != "partner" {
		t.Fatalf("unlink a contact invoices refer to: %v, want ErrConflict naming invoice.partner", err)
	}
	inv2 := e.ID("invoice", "INV-2")
	if err := e.ORM.Unlink(Sudo(), "invoice", []int64{inv2}); err != nil {
		t.Fatalf("unlink invoice: %v", err)
	}
	if n, _ := e.ORM.Count(Sudo(), "invoice_line", orm.Domain{[]any{"invoice", "=", inv2}}); n != 0 {
		t.Fatalf("cascade left %d lines", n)
	}
	rows, err := e.DB.Query(context.Background(), `SELECT COUNT(*) AS "n" FROM "`+orm.JoinTable("invoice", "tags")+`" WHERE "src" = ?`, inv2)
	if err != nil || Show(rows[0]["n"]) != "0" {
		t.Fatalf("join rows of the deleted invoice: %v, %v", rows, err)
	}
	// Deleting a tag removes its links; deleting a country is restricted.
	if err := e.ORM.Unlink(Sudo(), "tag", []int64{e.ID("tag", "urgent")}); err != nil {
		t.Fatalf("unlink tag: %v", err)
	}
	if got := e.lines(t, e.ID("invoice", "INV-1")); got != "A | | 100" {
		t.Fatalf("INV-1 after its tag was deleted: %q", got)
	}
	if err := e.ORM.Unlink(Sudo(), "invoice", []int64{999}); !errors.Is(err, orm.ErrNotFound) {
		t.Fatalf("unlink a missing record: %v, want ErrNotFound", err)
	}
}
