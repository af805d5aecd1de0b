package ormtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/sms-baseline/sms/plugins/orm"
)

// OwnGuard lets user 1 (an admin) do anything and other users read and
// write only invoices of partner Acme, never contacts named Beta, and
// never delete.
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
	// A path into a model the guard narrows cannot probe hidden records.
	if got := search(orm.WithOp(context.Background(), orm.OpContext{UserID: 2, Admin: false}), nil); len(got) != 2 {
		t.Fatalf("user sees %v", got)
	}
	ids, err := e.ORM.Search(user, "contact", orm.Domain{[]any{"email", "like", "beta"}}, orm.SearchOptions{})
	if err != nil || len(ids) != 0 {
		t.Fatalf("user finds hidden contact Beta: %v, %v", ids, err)
	}
	if _, err := e.ORM.Read(user, "invoice", []int64{e.ID("invoice", "INV-2")}, nil); !errors.Is(err, orm.ErrNotFound) {
		t.Fatalf("user reads INV-2: %v, want ErrNotFound", err)
	}
	if err := e.ORM.Write(user, "invoice", []int64{e.ID("invoice", "INV-2")}, map[string]any{"total": 1}); !errors.Is(err, orm.ErrNotFound) {
		t.Fatalf("user writes INV-2: %v, want ErrNotFound", err)
	}
	if err := e.ORM.Unlink(user, "invoice", []int64{e.ID("invoice", "INV-1")}); !errors.Is(err, orm.ErrForbidden) {
		t.Fatalf("user deletes INV-1: %v, want ErrForbidden", err)
	}
	if _, err := e.ORM.Create(user, "invoice", map[string]any{"number": "X", "partner": e.ID("contact", "Beta")}); !errors.Is(err, orm.ErrForbidden) {
		t.Fatalf("user creates an invoice outside the guard's domain: %v, want ErrForbidden", err)
	}
	if n, _ := e.ORM.Count(Sudo(), "invoice", orm.Domain{[]any{"number", "=", "X"}}); n != 0 {
		t.Fatalf("the refused create left %d records", n)
	}
	// A write may not move a record out of what the user may write (seen
	// failing without the check after the update).
	err = e.ORM.Write(user, "invoice", []int64{e.ID("invoice", "INV-1")}, map[string]any{"partner": e.ID("contact", "Beta"), "total": 5})
	if !errors.Is(err, orm.ErrForbidden) {
		t.Fatalf("user moves INV-1 to Beta: %v, want ErrForbidden", err)
	}
	if got := search(user, orm.Domain{[]any{"total", "=", 100}}); !slices.Equal(got, []string{"INV-1"}) {
		t.Fatalf("after the refused write the user sees %v with total 100, want [INV-1]", got)
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
