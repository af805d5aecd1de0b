package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// Driver describes the Postgres store to a driver registry. Its specs are
// postgres:// and postgresql:// URLs; the settings' Schema is the tenant's
// schema ("public" when empty).
var Driver = contracts.StoreDriver{
	DriverInfo: contracts.DriverInfo{Name: "postgres", Aliases: []string{"postgresql"}, Help: "a schema of a database"},
	Form:       "a postgres:// URL",
	Open: func(ctx context.Context, s contracts.StoreSettings) (contracts.Store, error) {
		if !strings.HasPrefix(s.URL, "postgres://") && !strings.HasPrefix(s.URL, "postgresql://") {
			return nil, fmt.Errorf("open store: %q is not a postgres:// URL", s.URL)
		}
		st, err := OpenStore(ctx, Options{URL: s.URL, Schema: s.Schema})
		if err != nil {
			return nil, err
		}
		return st, nil
	},
}
