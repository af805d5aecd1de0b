// Package controllers reconciles the sms.dev resources. The controllers
// are thin: TenantReconciler runs each tenant's kernel through a
// kernelruntime.Runtime, reports its health and keeps one Watchers
// goroutine on its event stream; PluginReconciler submits Plugins to their
// tenant's kernel and maps the judge's verdict to kstatus conditions;
// ApprovalReconciler carries a human's decision to the kernel, bound to
// the kernel's request, the exact code and the declaration it was asked
// about (one Approval per request: approval_request.go; declarations:
// declaration.go); and the Mirror keeps a Plugin object
// for every plugin the agent made inside a kernel.
//
// One owner per field: a Plugin from git owns its kernel plugin (the
// kernel follows the spec); an agent-made Plugin (sms.dev/origin=agent)
// mirrors its kernel plugin, whose spec only the mirror writes, except
// that a person's edit is pushed to the kernel first. ownership.go says
// how an edit is told apart; docs/operator.md has the table.
//
// Every reconcile is idempotent: the kernel's submissions are idempotent,
// status is written through the status subresource only when it changed,
// and the mirror applies only what differs from what it last copied.
// Events from each kernel's stream wake what they concern, through field
// indexes (index.go), so nothing polls a kernel; the tenants' resync is a
// safety net.
package controllers
