package collections_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/collections"
)

// Malformed and clashing items are rejected at contribution, failing only
// the plugin that made them, with a message naming what is wrong. Seen
// failing with checkField's reserved-name check removed, with the registry
// accepting a second definition of a collection, and with a field clashing
// with the collection's own field accepted.
func TestContributionValidation(t *testing.T) {
	text := func(name string) collections.Field { return collections.Field{Name: name, Type: collections.TypeText} }
	noop := func(context.Context, collections.HookEvent) error { return nil }
	cases := []struct {
		name, point string
		item        any
		msg         string
	}{
		{"upper-case name", "collection", collections.Collection{Name: "Invoice"}, `collection name "Invoice" must be a lowercase letter`},
		{"name too long", "collection", collections.Collection{Name: strings.Repeat("a", 40)}, "followed by up to 38"},
		{"reserved field", "collection", collections.Collection{Name: "x", Fields: []collections.Field{text("id")}}, `field name "id" is reserved`},
		{"bad field name", "collection", collections.Collection{Name: "x", Fields: []collections.Field{text("a-b")}}, `field name "a-b" must be`},
		{"unknown type", "collection", collections.Collection{Name: "x", Fields: []collections.Field{{Name: "d", Type: "date"}}},
			`field "d": type "date" must be one of text, integer, real, boolean, json`},
		{"default of the wrong type", "collection", map[string]any{"name": "x", "fields": []any{
			map[string]any{"name": "n", "type": "integer", "default": "zero"}}}, `default of field "n": want a whole number`},
		{"field twice", "collection", collections.Collection{Name: "x", Fields: []collections.Field{text("a"), text("a")}}, `field "a" is listed twice`},
		{"misspelled key", "collection", map[string]any{"name": "x", "feilds": []any{}}, `unknown field "feilds"`},
		{"not an object", "collection", 42, "a collection is {name, fields}"},
		{"nil collection", "collection", (*collections.Collection)(nil), "nil *Collection"},
		{"collection taken", "collection", collections.Collection{Name: "invoice"}, `collection "invoice" is already defined by plugin app.invoices`},
		{"field of the collection", "collection-field", collections.FieldContribution{Collection: "invoice", Field: text("customer")},
			`collection "invoice": field "customer" is already defined by plugin app.invoices`},
		{"field contributed", "collection-field", collections.FieldContribution{Collection: "invoice", Field: text("note")},
			`collection "invoice": field "note" is already contributed by plugin app.notes`},
		{"collection with a contributed field", "collection", collections.Collection{Name: "draft", Fields: []collections.Field{text("tag")}},
			`collection "draft": field "tag" is already contributed by plugin app.notes`},
		{"field of a bad collection", "collection-field", map[string]any{"collection": "X", "field": map[string]any{"name": "a", "type": "text"}},
			`collection name "X"`},
		{"field without a type", "collection-field", &collections.FieldContribution{Collection: "invoice", Field: collections.Field{Name: "b"}},
			`field "b": type "" must be one of`},
		{"hook op", "collection-hook", collections.Hook{Collection: "invoice", On: "upsert", Handler: noop}, `hook on "upsert" must be one of create, update, delete`},
		{"hook when", "collection-hook", &collections.Hook{Collection: "invoice", On: "create", When: "during", Handler: noop}, `hook when "during" must be before or after`},
		{"hook without handler", "collection-hook", collections.Hook{Collection: "invoice", On: "create"}, "has no handler"},
		{"hook handler not a function", "collection-hook", map[string]any{"collection": "invoice", "on": "create", "handler": "x"}, "hook handler must be a function"},
		{"hook of a bad collection", "collection-hook", collections.Hook{Collection: "c d", On: "create", Handler: noop}, `collection name "c d"`},
		{"hook not an object", "collection-hook", "create", "a hook is {collection, on, when?, handler}, got string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := boot(t, openSQLite(t), invoiceApp(), app("app.notes", map[string][]any{collections.FieldPoint: {
				collections.FieldContribution{Collection: "invoice", Field: text("note")},
				collections.FieldContribution{Collection: "draft", Field: text("tag")},
			}}))
			err := f.add(app("app.bad", map[string][]any{tc.point: {tc.item}}))
			if kernel.CodeOf(err) != kernel.CodeValidation || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("contributing %s = %v, want a validation error containing %q", jsonOf(tc.item), err, tc.msg)
			}
			if v, _ := f.k.Fiber("app.invoices"); v.State != kernel.StateActive {
				t.Fatalf("app.invoices is %s after app.bad failed, want active", v.State)
			}
		})
	}
}
