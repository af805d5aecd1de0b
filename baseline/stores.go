package baseline

import (
	"context"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/store/postgres"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
)

// Stores are the store drivers OpenStore chooses among, by the scheme of
// a spec (the text before its first colon): sqlite, then postgres. An
// application that links a store driver of its own registers it here to
// open it by spec.
var Stores = contracts.MustRegistry("store", sqlite.Driver, postgres.Driver)

// OpenStore opens the store a spec names: "sqlite:PATH" (the parent
// directory is created), "sqlite::memory:", or a postgres:// or
// postgresql:// URL with the tenant's schema ("public" when empty); in
// general, whatever the driver of Stores its scheme names opens.
func OpenStore(ctx context.Context, spec, schema string) (contracts.Store, error) {
	scheme, _, _ := strings.Cut(spec, ":")
	d, err := Stores.Lookup(scheme)
	if err != nil {
		return nil, fmt.Errorf("open store: %q: want %s", spec, StoreForms())
	}
	return d.Open(ctx, contracts.StoreSettings{URL: spec, Schema: schema})
}

// StoreForms lists how the specs of Stores' drivers are written:
// "sqlite:PATH or a postgres:// URL".
func StoreForms() string {
	var forms []string
	for _, d := range Stores.All() {
		forms = append(forms, d.Form)
	}
	return contracts.OrList(forms)
}
