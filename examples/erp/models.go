package erp

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

// Models' names.
const (
	Contact     = "contact"
	Product     = "product"
	Tag         = "tag"
	Invoice     = "invoice"
	InvoiceLine = "invoice_line"
)

// ModelsPluginID is the plugin declaring the models.
const ModelsPluginID = "erp.models"

func sel(values ...string) []orm.Option {
	out := make([]orm.Option, len(values))
	for i, v := range values {
		out[i] = orm.Option{Value: v}
	}
	return out
}

// models are the application's ORM models.
func models() []any {
	return []any{
		orm.Model{Name: Contact, Description: "A customer or supplier", Fields: map[string]orm.Field{
			"name":       {Kind: orm.KindChar, Required: true},
			"email":      {Kind: orm.KindChar},
			"is_company": {Kind: orm.KindBool, Default: false},
		}},
		orm.Model{Name: Product, Description: "Something sold", Fields: map[string]orm.Field{
			"name":  {Kind: orm.KindChar, Required: true},
			"price": {Kind: orm.KindFloat, Default: 0},
		}},
		orm.Model{Name: Tag, Fields: map[string]orm.Field{"name": {Kind: orm.KindChar, Required: true}}},
		orm.Model{Name: Invoice, Description: "A customer invoice", DisplayField: "number", Order: "number", Fields: map[string]orm.Field{
			"number":   {Kind: orm.KindChar, Required: true},
			"customer": {Kind: orm.KindMany2One, Target: Contact},
			"date":     {Kind: orm.KindDate, Default: orm.DefaultToday},
			"due":      {Kind: orm.KindDate},
			"state":    {Kind: orm.KindSelection, Default: "draft", Options: sel("draft", "posted", "paid")},
			"lines":    {Kind: orm.KindOne2Many, Target: InvoiceLine, Inverse: "invoice"},
			"tags":     {Kind: orm.KindMany2Many, Target: Tag},
			"total":    {Kind: orm.KindComputed, Returns: orm.KindFloat, Compute: "compute_total", Depends: []string{"lines.subtotal"}},
		}},
		orm.Model{Name: InvoiceLine, Description: "One line of an invoice", Fields: map[string]orm.Field{
			"invoice":  {Kind: orm.KindMany2One, Target: Invoice, Required: true, OnDelete: orm.OnDeleteCascade},
			"product":  {Kind: orm.KindMany2One, Target: Product},
			"quantity": {Kind: orm.KindFloat, Default: 1},
			"price":    {Kind: orm.KindFloat, Default: 0},
			"subtotal": {Kind: orm.KindComputed, Returns: orm.KindFloat, Compute: "compute_subtotal", Depends: []string{"quantity", "price"}},
		}},
	}
}

// modelsPlugin declares the models and the methods their computed
// fields call.
func modelsPlugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: ModelsPluginID, Version: "1", Description: "Contacts, products and invoices",
			Inject: []string{orm.Key}, Points: []string{orm.MethodPoint},
			Contributes: map[string][]any{orm.ModelPoint: models()}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			for _, m := range []orm.Method{
				{Model: InvoiceLine, Name: "compute_subtotal", Handler: subtotals},
				{Model: Invoice, Name: "compute_total", Handler: totals},
			} {
				if _, err := c.Contribute(orm.MethodPoint, m); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// subtotals is each line's quantity times its price.
func subtotals(_ context.Context, call orm.MethodCall) (any, error) {
	out := make(map[int64]any, len(call.Records))
	for _, r := range call.Records {
		id, _ := r["id"].(int64)
		q, _ := r["quantity"].(float64)
		p, _ := r["price"].(float64)
		out[id] = q * p
	}
	return out, nil
}

// totals sums each invoice's lines, read with the caller's rights.
func totals(ctx context.Context, call orm.MethodCall) (any, error) {
	out := make(map[int64]any, len(call.IDs))
	ids := make([]any, len(call.IDs)) // a domain's values are JSON's
	for i, id := range call.IDs {
		out[id], ids[i] = 0.0, id
	}
	if call.Orm == nil {
		return nil, fmt.Errorf("compute_total needs the ORM")
	}
	found, err := call.Orm.Search(ctx, InvoiceLine, orm.Domain{[]any{"invoice", "in", ids}}, orm.SearchOptions{Limit: orm.MaxLimit})
	if err != nil {
		return nil, err
	}
	lines, err := call.Orm.Read(ctx, InvoiceLine, found, orm.ReadSpec{"invoice": nil, "quantity": nil, "price": nil})
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		inv, _ := l["invoice"].(orm.Record)
		id, _ := inv["id"].(int64)
		q, _ := l["quantity"].(float64)
		p, _ := l["price"].(float64)
		if sum, ok := out[id].(float64); ok {
			out[id] = sum + q*p
		}
	}
	return out, nil
}
