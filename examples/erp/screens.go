package erp

import (
	"context"
	"errors"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/audit"
	"github.com/sms-baseline/sms/plugins/automation"
	"github.com/sms-baseline/sms/plugins/meta"
)

// ScreensPluginID is the plugin using the application services: tracked
// fields, an automation, views, actions and menus.
const ScreensPluginID = "erp.screens"

// AutomationPosted is the ERP's own automation: a note on every invoice
// that is posted.
const AutomationPosted = "erp-posted-note"

// screensPlugin tracks the invoice's state, due date and customer (each
// change posts a message on its thread), notes every invoice that is
// posted, and describes the invoice and contact screens with their menu.
// It injects the keys of the audit, automation and meta plugins, so it
// waits, inactive, until a kernel turns them on (a Tenant's
// spec.systemPlugins, or --system-plugins).
//
// Its items are contributed when it activates, in order: a menu names the
// action it opens and the action the model, so each comes after what it
// names (a manifest's contributions are applied point by point, by name).
func screensPlugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: ScreensPluginID, Version: "1", Description: "The ERP's tracked fields, automation, views and menus",
			Inject: []string{audit.Key, automation.Key, meta.Key},
			Points: []string{audit.TrackPoint, automation.Point, meta.ViewPoint, meta.ActionPoint, meta.MenuPoint}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			var errs []error
			for _, it := range screens() {
				_, err := c.Contribute(it.point, it.item)
				errs = append(errs, err)
			}
			return errors.Join(errs...)
		},
	}
}

type item struct {
	point string
	item  any
}

func screens() []item {
	f := func(names ...string) []meta.ViewField {
		out := make([]meta.ViewField, len(names))
		for i, n := range names {
			out[i] = meta.ViewField{Name: n}
		}
		return out
	}
	return []item{
		{audit.TrackPoint, audit.Track{Model: Invoice, Fields: []string{"state", "due", "customer"}}},
		{automation.Point, automation.Automation{Name: AutomationPosted, Model: Invoice, Trigger: automation.OnWrite,
			Watch: []string{"state"}, Filter: []any{[]any{"state", "=", "posted"}},
			Action: automation.Action{Kind: automation.ActNote, Body: "Posted: the customer can be sent this invoice."}}},
		{meta.ViewPoint, meta.View{Name: "invoice.list", Model: Invoice, Type: "list", Fields: f("number", "customer", "due", "state", "total")}},
		{meta.ViewPoint, meta.View{Name: "invoice.form", Model: Invoice, Type: "form", Fields: f("number", "customer", "date", "due", "state", "lines", "tags", "total")}},
		{meta.ViewPoint, meta.View{Name: "invoice.search", Model: Invoice, Type: "search", Fields: f("number", "customer", "state")}},
		{meta.ViewPoint, meta.View{Name: "contact.list", Model: Contact, Type: "list", Fields: f("name", "email", "is_company")}},
		{meta.ViewPoint, meta.View{Name: "contact.form", Model: Contact, Type: "form", Fields: f("name", "email", "is_company")}},
		{meta.ActionPoint, meta.Action{Name: "invoices", Label: "Invoices", Model: Invoice}},
		{meta.ActionPoint, meta.Action{Name: "invoices.unpaid", Label: "Unpaid invoices", Model: Invoice,
			Domain: []any{[]any{"state", "=", "posted"}}, Order: "due"}},
		{meta.ActionPoint, meta.Action{Name: "customers", Label: "Customers", Model: Contact}},
		{meta.MenuPoint, meta.Menu{Name: "sales", Label: "Sales", Sequence: 10}},
		{meta.MenuPoint, meta.Menu{Name: "sales.invoices", Label: "Invoices", Parent: "sales", Action: "invoices", Sequence: 1}},
		{meta.MenuPoint, meta.Menu{Name: "sales.unpaid", Label: "Unpaid", Parent: "sales", Action: "invoices.unpaid", Sequence: 2}},
		{meta.MenuPoint, meta.Menu{Name: "sales.customers", Label: "Customers", Parent: "sales", Action: "customers", Sequence: 3}},
	}
}
