package controllers

import (
	"fmt"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// tenantObservation is what one reconcile of a Tenant found. Its phases
// fill it and write nothing else; tenantStatus maps it and the
// reconcile's error to the status, once.
type tenantObservation struct {
	// runtime is where the runtime runs the tenant's kernel; nil until
	// it answered.
	runtime *kernelruntime.Status
	// adminSecret and chatSecret name the tenant's credential Secrets.
	adminSecret, chatSecret string
	// suspended: the spec suspends the tenant and the runtime stopped
	// its kernel.
	suspended bool
	// state is the kernel's answer to the health check; nil when it gave
	// none.
	state *adminv1.State
	// budget is the kernel's budget and its use; nil when it gave none.
	budget *adminv1.Budget
}

// tenantStatus is the status Tenant t shows after a reconcile that
// observed o and ended with err. It reads t and writes nothing: the
// Tenant reconciler patches what it returns.
func tenantStatus(t *smsv1.Tenant, o *tenantObservation, err error) smsv1.TenantStatus {
	s := *t.Status.DeepCopy()
	if k := o.runtime; k != nil {
		s.Endpoint, s.AdminEndpoint = k.Endpoint, k.AdminEndpoint
		s.AdminTokenSecret, s.ChatTokenSecret = o.adminSecret, o.chatSecret
	}
	r, ok := readinessOf(err)
	switch {
	case ok:
	case o.suspended:
		r, ok = readiness{paused: true, reason: smsv1.ReasonSuspended, msg: "the tenant is suspended; its data is kept"}, true
	case o.state != nil && o.runtime != nil:
		countPlugins(&s, *o.state)
		s.Budget = budgetStatus(o.budget)
		r, ok = readiness{ok: true, reason: smsv1.ReasonKernelReady, msg: fmt.Sprintf("kernel %s serves at %s", o.state.Kernel, o.runtime.Endpoint)}, true
		if o.state.SafeMode {
			r.msg += " in safe mode: system plugins only, no agent plugin runs"
		}
	}
	if ok {
		setProgress(conditions{&s.Conditions, t.Generation}, r, err)
	}
	if observed(err) {
		s.ObservedGeneration = t.Generation
	}
	return s
}

// countPlugins fills the plugin counts, the taint and whether the kernel
// has users from the kernel's state.
func countPlugins(st *smsv1.TenantStatus, s adminv1.State) {
	var c smsv1.PluginCounts
	for _, f := range s.Fibers {
		if f.Trust != adminv1.TrustAgent {
			continue
		}
		switch {
		case f.Quarantine != "" && !f.Enabled:
			c.Quarantined++
		case f.State == adminv1.StateActive:
			c.Mounted++
		case f.State == adminv1.StateFailed:
			c.Failed++
		}
	}
	c.Pending = int32(len(s.Pending))
	st.Plugins = &c
	st.Taint = s.Taint
	st.Users = s.Users
	st.SafeMode = s.SafeMode
}

// budgetStatus is what the tenant used this period, from the kernel's
// budget; nil when the kernel gave none.
func budgetStatus(b *adminv1.Budget) *smsv1.TenantBudgetStatus {
	if b == nil {
		return nil
	}
	used, limit := b.Tenant, b.Limits.Tenant
	out := &smsv1.TenantBudgetStatus{Period: b.Period, Currency: b.Currency,
		Used: smsv1.BudgetAmounts{Tokens: used.Tokens, CostMinor: used.CostMinor, WallMillis: used.WallMillis, Rows: used.Rows}}
	for _, d := range []struct {
		name        string
		used, limit int64
	}{{"tokens", used.Tokens, limit.Tokens}, {"costMinor", used.CostMinor, limit.CostMinor},
		{"wallMillis", used.WallMillis, limit.WallMillis}, {"rows", used.Rows, limit.Rows}} {
		if d.limit > 0 && d.used >= d.limit {
			out.Exceeded = append(out.Exceeded, d.name)
		}
	}
	return out
}
