package ormtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

func testRead(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{})
	e.Seed(t)
	inv1, inv2, inv4 := e.ID("invoice", "INV-1"), e.ID("invoice", "INV-2"), e.ID("invoice", "inv-4")
	spec := orm.ReadSpec{"number": nil, "display": nil, "total": nil, "qty": nil, "meta": nil, "paid_at": nil,
		"partner": {"email": nil, "country": {"code": nil}}, "lines": {"product": nil, "price": nil}, "tags": nil,
		"partner_email": nil, "partner_country": nil, "doubled": nil, "created_at": nil, "created_by": nil}
	recs, err := e.ORM.Read(Sudo(), "invoice", []int64{inv2, inv1, inv4}, spec)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	got := Show(recs)
	want := Show([]map[string]any{
		{"id": inv2, "number": "INV-2", "display": "INV-2", "total": 250.5, "qty": 2, "meta": nil, "paid_at": "2026-01-21T08:00:00.000Z",
			"partner":       map[string]any{"id": e.ID("contact", "Beta"), "email": "beta_1@x.de", "country": map[string]any{"id": e.ID("country", "DE"), "code": "DE"}},
			"lines":         []any{map[string]any{"id": 2, "product": "B widget", "price": 125.25}, map[string]any{"id": 3, "product": "C gadget", "price": 0}},
			"tags":          []any{e.ID("tag", "urgent"), e.ID("tag", "big")},
			"partner_email": "beta_1@x.de", "partner_country": "DE", "doubled": 501, "created_at": "2026-03-04T05:06:07.000Z", "created_by": nil},
		{"id": inv1, "number": "INV-1", "display": "INV-1", "total": 100, "qty": 1, "meta": map[string]any{"k": "v"}, "paid_at": nil,
			"partner":       map[string]any{"id": e.ID("contact", "Acme"), "email": "acme@x.fr", "country": map[string]any{"id": e.ID("country", "FR"), "code": "FR"}},
			"lines":         []any{map[string]any{"id": 1, "product": "A", "price": 100}},
			"tags":          []any{e.ID("tag", "urgent")},
			"partner_email": "acme@x.fr", "partner_country": "FR", "doubled": 200, "created_at": "2026-03-04T05:06:07.000Z", "created_by": nil},
		{"id": inv4, "number": "inv-4", "display": "inv-4", "total": nil, "qty": 4, "meta": nil, "paid_at": nil, "partner": nil,
			"lines": []any{}, "tags": []any{}, "partner_email": nil, "partner_country": nil, "doubled": nil,
			"created_at": "2026-03-04T05:06:07.000Z", "created_by": nil},
	})
	if got != want {
		t.Fatalf("read =\n%s\nwant\n%s", got, want)
	}
	// An empty spec of a many2one gives its id and display.
	recs, err = e.ORM.Read(Sudo(), "invoice", []int64{inv1}, orm.ReadSpec{"partner": {}})
	if err != nil || Show(recs[0]["partner"]) != Show(map[string]any{"id": e.ID("contact", "Acme"), "display": "Acme"}) {
		t.Fatalf("read partner {} = %s, %v", Show(recs), err)
	}
	for _, c := range []struct {
		spec orm.ReadSpec
		msg  string
	}{
		{orm.ReadSpec{"nope": nil}, "field nope: no such field"},
		{orm.ReadSpec{"total": {"x": nil}}, "not a relation"},
		{orm.ReadSpec{"partner": {"nope": nil}}, "model contact field nope"},
	} {
		if _, err := e.ORM.Read(Sudo(), "invoice", []int64{inv1}, c.spec); !errors.Is(err, orm.ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("read %v: %v, want ErrInvalid containing %q", c.spec, err, c.msg)
		}
	}
	if _, err := e.ORM.Read(Sudo(), "invoice", []int64{inv1, 999}, nil); !errors.Is(err, orm.ErrNotFound) || !strings.Contains(err.Error(), "999") {
		t.Errorf("read a missing id: %v, want ErrNotFound naming 999", err)
	}
	if _, err := e.ORM.Read(Sudo(), "nope", []int64{1}, nil); !errors.Is(err, orm.ErrInvalid) {
		t.Errorf("read an unknown model: %v, want ErrInvalid", err)
	}
}

func testCreateDefaults(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{}, App2())
	ctx := orm.WithOp(Sudo(), orm.OpContext{UserID: 7, Sudo: true})
	id, err := e.ORM.Create(ctx, "note", map[string]any{"title": "x"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	recs, err := e.ORM.Read(ctx, "note", []int64{id}, orm.ReadSpec{"owner": nil, "stamp": nil, "day": nil, "prio": nil,
		"created_by": nil, "updated_by": nil, "display": nil})
	want := Show([]map[string]any{{"id": id, "owner": 7, "stamp": "2026-03-04T05:06:07.000Z", "day": "2026-03-04", "prio": 3,
		"created_by": 7, "updated_by": 7, "display": "note," + Show(id)}})
	if err != nil || Show(recs) != want {
		t.Fatalf("defaults = %s, %v; want %s", Show(recs), err, want)
	}
	for _, c := range []struct {
		values map[string]any
		msg    string
	}{
		{map[string]any{}, "model note field title: is required"},
		{map[string]any{"title": nil}, "model note field title: is required"},
		{map[string]any{"title": 5}, "model note field title: want a string"},
		{map[string]any{"title": "x", "prio": 1.5}, "model note field prio: want a whole number"},
		{map[string]any{"title": "x", "day": "tomorrow"}, "model note field day: want a date"},
		{map[string]any{"title": "x", "nope": 1}, "model note field nope: no such field"},
		{map[string]any{"title": "x", "id": 1}, "model note field id: is set by the ORM"},
	} {
		if _, err := e.ORM.Create(ctx, "note", c.values); !errors.Is(err, orm.ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("create %v: %v, want ErrInvalid containing %q", c.values, err, c.msg)
		}
	}
	if _, err := e.ORM.Create(ctx, "invoice", map[string]any{"number": "X", "partner": 999}); !errors.Is(err, orm.ErrInvalid) ||
		!strings.Contains(err.Error(), "model invoice field partner: contact record 999 does not exist") {
		t.Errorf("create with a dangling many2one: %v", err)
	}
}

// App2 declares a note model whose defaults use $uid, $now and $today.
func App2() kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.notes", Version: "1", Inject: []string{orm.Key},
		Contributes: map[string][]any{orm.ModelPoint: {map[string]any{"name": "note", "fields": map[string]any{
			"title": map[string]any{"kind": "char", "required": true},
			"owner": map[string]any{"kind": "int", "default": "$uid"},
			"stamp": map[string]any{"kind": "datetime", "default": "$now"},
			"day":   map[string]any{"kind": "date", "default": "$today"},
			"prio":  map[string]any{"kind": "int", "default": 3},
		}}}}}}
}
