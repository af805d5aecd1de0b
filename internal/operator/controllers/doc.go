// Package controllers reconciles the sms.dev resources. The controllers
// are thin: TenantReconciler runs each tenant's kernel through a
// kernelruntime.Runtime and reports its health; PluginReconciler submits
// Plugins to their tenant's kernel and maps the judge's verdict to
// conditions; ApprovalReconciler carries a human's decision to the kernel,
// bound to the exact code it was asked about; and the tenant controller
// mirrors plugins the agent defined inside a kernel as Plugin objects.
//
// Every reconcile is idempotent: the kernel's submissions are idempotent,
// status is written through the status subresource only when it changed,
// and no controller ever writes a spec.
package controllers
