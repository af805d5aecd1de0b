// Package erp is a small invoicing application built on sms, the running
// example of docs/applications.md. It imports only the module's public
// packages, as an application in a module of its own would:
//
//   - models.go declares the ORM models (contacts, products, tags, and
//     invoices with lines and a computed total) and their compute methods;
//   - access.go declares the rbac groups (sales, accountant), what each
//     may do on each model, and the record rules (a salesperson reaches
//     the invoices they created, an accountant all of them);
//   - service.go serves GET /api/erp/summary and the agent's
//     invoice_summary tool, both as the caller;
//   - seed.go fills an empty database with a few contacts and products.
//
// Plugins returns them in install order; cmd/erp-kernel is the kernel
// binary made of them with kernelcmd, which the operator runs for a
// Tenant whose spec.image names its image (config/tenant.yaml).
package erp
