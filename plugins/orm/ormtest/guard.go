package ormtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/plugins/orm"
)

// OwnGuard lets user 1 (an admin) do anything; user 3 (an auditor) every
// invoice; other users read only invoices of partner Acme and write only
// those not paid. No one but the admin sees contacts named Beta or
// deletes.
func OwnGuard(acme int64) orm.Guard {
	return orm.GuardFuncs{
		CanFunc: func(_ context.Context, r orm.GuardRequest) error {
			if r.Op.Admin || r.Action != orm.ActionUnlink {
				return nil
			}
			return fmt.Errorf("user %d may not delete", r.Op.UserID)
		},
		DomainFunc: func(_ context.Context, r orm.GuardRequest) (orm.Domain, error) {
			switch {
			case r.Op.Admin:
				return nil, nil
			case r.Model == "invoice" && r.Op.UserID == 3: // an auditor: every invoice
				return nil, nil
			case r.Model == "invoice" && r.Action == orm.ActionWrite:
				return orm.Domain{[]any{"partner", "=", acme}, []any{"state", "!=", "paid"}}, nil
			case r.Model == "invoice":
				return orm.Domain{[]any{"partner", "=", acme}}, nil
			case r.Model == "contact":
				return orm.Domain{[]any{"name", "!=", "Beta"}}, nil
			}
			return nil, nil
		},
	}
}

func testGuard(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{})
	e.Seed(t)
	remove, err := e.ORM.SetGuard(OwnGuard(e.ID("contact", "Acme")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ORM.SetGuard(orm.GuardFuncs{}); err == nil {
		t.Fatal("a second guard was accepted")
	}
	user := orm.WithOp(context.Background(), orm.OpContext{UserID: 2})
	admin := orm.WithOp(context.Background(), orm.OpContext{UserID: 1, Admin: true})
	search := func(ctx context.Context, d orm.Domain) []string {
		ids, err := e.ORM.Search(ctx, "invoice", d, orm.SearchOptions{})
		if err != nil {
			t.Fatalf("search: %v", err)
		}
		return e.Names("invoice", ids, false)
	}
	if got := search(user, nil); !slices.Equal(got, []string{"INV-1", "INV-3"}) {
		t.Fatalf("user sees %v, want [INV-1 INV-3]", got)
	}
	if got := search(admin, nil); len(got) != 5 {
		t.Fatalf("admin sees %v, want all 5", got)
	}
	// A path into a model the guard narrows cannot probe hidden records:
	// the auditor sees every invoice but not contact Beta (seen failing
	// with the guard left out of the subqueries a path compiles to).
	auditor := orm.WithOp(context.Background(), orm.OpContext{UserID: 3})
	if got := search(auditor, nil); len(got) != 5 {
		t.Fatalf("the auditor sees %v, want all 5", got)
	}
	if got := search(auditor, orm.Domain{[]any{"partner.name", "=", "Beta"}}); len(got) != 0 {
		t.Fatalf("the auditor finds %v through hidden contact Beta, want none", got)
	}
	if got := search(auditor, orm.Domain{[]any{"partner.email", "like", "beta"}}); len(got) != 0 {
		t.Fatalf("the auditor probes hidden contact Beta's email: %v, want none", got)
	}
	ids, err := e.ORM.Search(user, "contact", orm.Domain{[]any{"email", "like", "beta"}}, orm.SearchOptions{})
	if err != nil || len(ids) != 0 {
		t.Fatalf("user finds hidden contact Beta: %v, %v", ids, err)
	}
	if _, err := e.ORM.Read(user, "invoice", []int64{e.ID("invoice", "INV-2")}, nil); !errors.Is(err, orm.ErrNotFound) {
		t.Fatalf("user reads INV-2: %v, want ErrNotFound", err)
	}
	recs, err := e.ORM.Read(user, "invoice", []int64{e.ID("invoice", "INV-1")}, orm.ReadSpec{"partner": {"name": nil}})
	if err != nil || Show(recs[0]["partner"]) == "null" {
		t.Fatalf("user reads INV-1's partner: %s, %v", Show(recs), err)
	}
	groups, err := e.ORM.ReadGroup(user, "invoice", orm.GroupRequest{GroupBy: []string{"state"}})
	if err != nil || Show(groups) != `[{"count":1,"state":"draft"},{"count":1,"state":"paid"}]` {
		t.Fatalf("user groups %s, %v", Show(groups), err)
	}
	// Sudo bypasses the guard; removing the guard opens everything.
	if got := search(orm.Sudo(user), nil); len(got) != 5 {
		t.Fatalf("sudo sees %v, want all 5", got)
	}
	remove()
	if got := search(user, nil); len(got) != 5 {
		t.Fatalf("without the guard the user sees %v, want all 5", got)
	}
}

// testGuardWrites: writes, deletes and creates stay within the guard.
func testGuardWrites(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{})
	e.Seed(t)
	if _, err := e.ORM.SetGuard(OwnGuard(e.ID("contact", "Acme"))); err != nil {
		t.Fatal(err)
	}
	user := orm.WithOp(context.Background(), orm.OpContext{UserID: 2})
	search := func(ctx context.Context, d orm.Domain) []string {
		ids, err := e.ORM.Search(ctx, "invoice", d, orm.SearchOptions{})
		if err != nil {
			t.Fatalf("search: %v", err)
		}
		return e.Names("invoice", ids, false)
	}
	var err error
	if err := e.ORM.Write(user, "invoice", []int64{e.ID("invoice", "INV-2")}, map[string]any{"total": 1}); !errors.Is(err, orm.ErrNotFound) {
		t.Fatalf("user writes INV-2: %v, want ErrNotFound", err)
	}
	if err := e.ORM.Unlink(user, "invoice", []int64{e.ID("invoice", "INV-1")}); !errors.Is(err, orm.ErrForbidden) {
		t.Fatalf("user deletes INV-1: %v, want ErrForbidden", err)
	}
	if _, err := e.ORM.Create(user, "invoice", map[string]any{"number": "X", "partner": e.ID("contact", "Ünïcode")}); !errors.Is(err, orm.ErrForbidden) {
		t.Fatalf("user creates an invoice outside the guard's domain: %v, want ErrForbidden", err)
	}
	// A many2one may not point at a record the user cannot read; the error
	// does not tell a hidden record from a missing one.
	if _, err := e.ORM.Create(user, "invoice", map[string]any{"number": "X", "partner": e.ID("contact", "Beta")}); !errors.Is(err, orm.ErrInvalid) ||
		!strings.Contains(err.Error(), "does not exist or may not be read") {
		t.Fatalf("user creates an invoice of hidden contact Beta: %v, want ErrInvalid", err)
	}
	if n, _ := e.ORM.Count(Sudo(), "invoice", orm.Domain{[]any{"number", "=", "X"}}); n != 0 {
		t.Fatalf("the refused create left %d records", n)
	}
	// A write may not move a record out of what the user may write (seen
	// failing without the check after the update).
	err = e.ORM.Write(user, "invoice", []int64{e.ID("invoice", "INV-1")}, map[string]any{"partner": e.ID("contact", "Ünïcode"), "total": 5})
	if !errors.Is(err, orm.ErrForbidden) {
		t.Fatalf("user moves INV-1 to another partner: %v, want ErrForbidden", err)
	}
	if got := search(user, orm.Domain{[]any{"total", "=", 100}}); !slices.Equal(got, []string{"INV-1"}) {
		t.Fatalf("after the refused write the user sees %v with total 100, want [INV-1]", got)
	}
	// Nor may an x2many command of another model's write (seen failing
	// without the check once every command has run).
	err = e.ORM.Write(user, "contact", []int64{e.ID("contact", "Acme")}, map[string]any{"invoices": []any{
		map[string]any{"op": "update", "id": e.ID("invoice", "INV-1"), "values": map[string]any{"state": "paid"}}}})
	if !errors.Is(err, orm.ErrForbidden) {
		t.Fatalf("user pays INV-1 through its partner: %v, want ErrForbidden", err)
	}
	if got := search(user, orm.Domain{[]any{"state", "=", "draft"}}); !slices.Equal(got, []string{"INV-1"}) {
		t.Fatalf("after the refused command the user's draft invoices are %v, want [INV-1]", got)
	}
}
