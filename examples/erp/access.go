package erp

import (
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/rbac"
)

// The application's groups.
const (
	// GroupSales creates invoices and reaches the ones they created.
	GroupSales = "sales"
	// GroupAccountant reaches every invoice, and may delete them.
	GroupAccountant = "accountant"
)

// AccessPluginID is the plugin declaring groups, access and rules.
const AccessPluginID = "erp.access"

// accessPlugin is who may do what: every user reads contacts, products
// and tags; sales create and edit invoices, their own only; accountants
// reach all invoices. The rbac plugin is on when the kernel runs with
// users (--users, or spec.users on a Tenant), which this application
// needs.
func accessPlugin() kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: AccessPluginID, Version: "1", Description: "Who may do what in the ERP",
		Inject: []string{rbac.Key},
		Contributes: map[string][]any{
			rbac.GroupPoint: {
				rbac.Group{Name: GroupSales, Description: "Sells: creates invoices and reaches their own"},
				rbac.Group{Name: GroupAccountant, Implies: []string{GroupSales}, Description: "Keeps the books: reaches every invoice"},
			},
			rbac.AccessPoint: {
				rbac.Access{Group: rbac.GroupUser, Model: Contact, Read: true},
				rbac.Access{Group: rbac.GroupUser, Model: Product, Read: true},
				rbac.Access{Group: rbac.GroupUser, Model: Tag, Read: true},
				rbac.Access{Group: GroupSales, Model: Contact, Create: true, Write: true},
				rbac.Access{Group: GroupSales, Model: Invoice, Read: true, Create: true, Write: true},
				rbac.Access{Group: GroupSales, Model: InvoiceLine, Read: true, Create: true, Write: true, Unlink: true},
				rbac.Access{Group: GroupAccountant, Model: Invoice, Unlink: true},
				rbac.Access{Group: GroupAccountant, Model: Product, Create: true, Write: true},
			},
			rbac.RulePoint: {
				rbac.Rule{Name: "own invoices", Model: Invoice, Groups: []string{GroupSales},
					Domain: orm.Domain{[]any{orm.FieldCreatedBy, "=", rbac.UID}}},
				rbac.Rule{Name: "lines of own invoices", Model: InvoiceLine, Groups: []string{GroupSales},
					Domain: orm.Domain{[]any{"invoice.created_by", "=", rbac.UID}}},
				rbac.Rule{Name: "all invoices", Model: Invoice, Groups: []string{GroupAccountant}},
				rbac.Rule{Name: "all lines", Model: InvoiceLine, Groups: []string{GroupAccountant}},
			},
		}}}
}
