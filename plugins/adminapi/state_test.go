package adminapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/collections"
)

// The state lists the collections when the collections plugin is active.
// Seen failing with state() not reading the optional collections key.
func TestStateListsCollections(t *testing.T) {
	db, err := sqlite.Open(context.Background(), sqlite.Memory)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	dbPlugin := kernel.Plugin{
		Manifest: kernel.Manifest{ID: "test.db", Version: "1", Provide: []string{contracts.DatabaseKey}},
		Activate: func(_ context.Context, c *kernel.Context) error { return c.Provide(contracts.DatabaseKey, db) },
	}
	invoices := kernel.Plugin{Manifest: kernel.Manifest{ID: "app.invoices", Version: "1", Inject: []string{collections.Key},
		Contributes: map[string][]any{collections.CollectionPoint: {map[string]any{
			"name": "invoice", "fields": []any{map[string]any{"name": "amount", "type": "real"}}}}}}}
	f := setup(t, options{}, dbPlugin, collections.Plugin(), invoices)
	r := f.do(t, request{"GET", "/api/state", "", nil})
	if !strings.Contains(r.text, `"collections":[{"name":"invoice"`) {
		t.Fatalf("state = %s, want the invoice collection", r.text)
	}
}
