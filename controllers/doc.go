// Package controllers reconciles the sms.dev resources. The controllers
// are thin: TenantReconciler runs each tenant's kernel through a
// kernelruntime.Runtime, reports its health and keeps one Watchers
// goroutine on its event stream; Mirror, a controller of its own per
// Tenant, keeps a Plugin object for every plugin the agent made inside a
// kernel; PluginReconciler submits Plugins to their tenant's kernel and
// maps the judge's verdict to kstatus conditions; ApprovalReconciler
// carries a human's decision to the kernel, bound to the kernel's
// request, the exact code and the declaration it was asked about (one
// Approval per request: approval_request.go; declarations:
// declaration.go).
//
// Every reconcile has the same shape. Reconcile fetches the object, puts
// its finalizer first, and runs the phases (reconcile), which record what
// they find in an observation (pluginObservation, tenantObservation,
// approvalObservation) and write no status. One deferred call maps the
// observation and the phases' error to the status with a pure function
// (pluginStatus, tenantStatus, approvalStatus) and patches it once. The
// error is classified once, by its type (conditions.go): a terminalError
// is Stalled, a waitError (or errWait) is Reconciling and requeued after
// the poll interval, a retryError is Reconciling and retried with
// backoff, anything else leaves the conditions as they were; setProgress
// sets Ready, Reconciling and Stalled for Tenants and Plugins alike, and
// observedGeneration moves only when a reconcile saw its generation
// through (a success, a wait or a terminal outcome).
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
// Events from each kernel's stream wake what they concern (its Plugins,
// through field indexes (index.go), its Tenant and its Mirror), so
// nothing polls a kernel; the tenants' resync, one health check of each
// kernel, is a safety net.
package controllers
