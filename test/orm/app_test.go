package orm_test

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
)

// The application of the scenario: a system plugin declares invoices and
// guards them; alice (a chat credential) may not see Hidden Corp's.
const (
	adminToken = "admin-token"
	aliceToken = "alice-token"
	hidden     = "Hidden Corp"
)

var credentials = []smshttp.Credential{{Name: "alice", Token: aliceToken, Scopes: []smshttp.Scope{smshttp.ScopeChat, smshttp.ScopeRead}}}

// contextOf maps credentials to ORM users: the admin credential is an
// admin, alice is user 2.
func contextOf(ctx context.Context) orm.OpContext {
	switch smshttp.PrincipalFrom(ctx).Name {
	case "admin":
		return orm.OpContext{UserID: 1, Admin: true}
	case "alice":
		return orm.OpContext{UserID: 2}
	}
	return orm.OpContext{}
}

// invoicesApp declares the invoice model and a guard that hides Hidden
// Corp's invoices from everyone but admins.
func invoicesApp() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: "app.invoices", Version: "1", Inject: []string{orm.Key},
			Contributes: map[string][]any{orm.ModelPoint: {orm.Model{Name: "invoice", DisplayField: "number", Order: "number",
				Fields: map[string]orm.Field{
					"number":   {Kind: orm.KindChar, Required: true},
					"customer": {Kind: orm.KindChar},
					"due":      {Kind: orm.KindDate},
					"total":    {Kind: orm.KindFloat},
					"state":    {Kind: orm.KindSelection, Default: "draft", Options: []orm.Option{{Value: "draft"}, {Value: "posted"}, {Value: "paid"}}},
				}}}}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			svc, err := kernel.Lookup[orm.Service](c, orm.Key)
			if err != nil {
				return err
			}
			remove, err := svc.SetGuard(orm.GuardFuncs{DomainFunc: func(_ context.Context, r orm.GuardRequest) (orm.Domain, error) {
				if r.Op.Admin || r.Model != "invoice" {
					return nil, nil
				}
				return orm.Domain{[]any{"customer", "!=", hidden}}, nil
			}})
			if err != nil {
				return err
			}
			return c.OnUndo("invoice guard", func() error { remove(); return nil })
		},
	}
}

// seed creates the invoices once; today is 2026-06-01 in the scenario.
func seed(ctx context.Context, svc orm.Service) error {
	for _, v := range []map[string]any{
		{"number": "INV-1", "customer": "Acme", "due": "2026-05-01", "total": 100, "state": "posted"},
		{"number": "INV-2", "customer": "Beta", "due": "2026-07-01", "total": 50, "state": "posted"},
		{"number": "INV-3", "customer": "Acme", "due": "2026-04-01", "total": 70, "state": "paid"},
		{"number": "INV-4", "customer": hidden, "due": "2026-03-01", "total": 999, "state": "posted"},
		{"number": "INV-5", "customer": "Beta", "due": "2026-05-20", "total": 30},
	} {
		if _, err := svc.Create(orm.Sudo(ctx), "invoice", v); err != nil {
			return fmt.Errorf("seed %v: %w", v["number"], err)
		}
	}
	return nil
}
