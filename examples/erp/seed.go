package erp

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/plugins/orm"
)

// Seed fills an empty database with a few contacts, products and tags,
// as sudo; a database that has any contact is left alone, so it runs at
// every start. Invoices are left to users: each belongs to whoever
// creates it.
func Seed(ctx context.Context, svc orm.Service) error {
	ctx = orm.Sudo(ctx)
	n, err := svc.Count(ctx, Contact, nil)
	if err != nil || n > 0 {
		return err
	}
	for _, r := range []struct {
		model  string
		values map[string]any
	}{
		{Contact, map[string]any{"name": "Acme Corp", "email": "billing@acme.example", "is_company": true}},
		{Contact, map[string]any{"name": "Beta Ltd", "email": "accounts@beta.example", "is_company": true}},
		{Product, map[string]any{"name": "Consulting hour", "price": 120.0}},
		{Product, map[string]any{"name": "Support plan", "price": 900.0}},
		{Tag, map[string]any{"name": "priority"}},
		{Tag, map[string]any{"name": "recurring"}},
	} {
		if _, err := svc.Create(ctx, r.model, r.values); err != nil {
			return fmt.Errorf("seed %s %v: %w", r.model, r.values["name"], err)
		}
	}
	return nil
}
