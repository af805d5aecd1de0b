package controllers

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// waiting reports that the plugin waits on something other than the judge.
func (r *PluginReconciler) waiting(p *smsv1.Plugin, reason, msg string) {
	if meta.FindStatusCondition(p.Status.Conditions, smsv1.ConditionJudged) == nil {
		setCond(&p.Status.Conditions, p.Generation).to(smsv1.ConditionJudged, false, reason, msg)
	}
	setCond(&p.Status.Conditions, p.Generation).to(smsv1.ConditionReady, false, reason, msg)
}

// stalled reports a spec the operator cannot act on until it changes.
func (r *PluginReconciler) stalled(p *smsv1.Plugin, reason, msg string) {
	setCond(&p.Status.Conditions, p.Generation).to(smsv1.ConditionJudged, false, reason, msg)
	setCond(&p.Status.Conditions, p.Generation).to(smsv1.ConditionReady, false, reason, msg)
}

// setProgress derives the kstatus conditions from Ready: Ready means done;
// a rejection, a denial, a failed activation or an invalid spec is
// Stalled (only a new spec changes it); anything else (a pending approval,
// a tenant that is not ready, an unreachable kernel, a missing reference)
// is Reconciling, retried until it resolves.
func setProgress(p *smsv1.Plugin) {
	ready := meta.FindStatusCondition(p.Status.Conditions, smsv1.ConditionReady)
	if ready == nil {
		return
	}
	conds, gen := &p.Status.Conditions, p.Generation
	switch {
	case ready.Status == metav1.ConditionTrue:
		setCond(conds, gen).to(smsv1.ConditionReconciling, false, ready.Reason, "")
		setCond(conds, gen).to(smsv1.ConditionStalled, false, ready.Reason, "")
	case stalledReason(ready.Reason):
		setCond(conds, gen).to(smsv1.ConditionReconciling, false, ready.Reason, "")
		setCond(conds, gen).to(smsv1.ConditionStalled, true, ready.Reason, ready.Message)
	default:
		setCond(conds, gen).to(smsv1.ConditionReconciling, true, ready.Reason, ready.Message)
		setCond(conds, gen).to(smsv1.ConditionStalled, false, ready.Reason, "")
	}
}

// stalledReason reports whether a Ready=False reason needs a spec change.
func stalledReason(reason string) bool {
	switch reason {
	case smsv1.ReasonInvalidSpec, smsv1.ReasonDenied, smsv1.ReasonFailed, smsv1.ReasonRolledBack, smsv1.ReasonRejected,
		smsv1.ReasonKernelRefused:
		return true
	}
	return strings.HasPrefix(reason, "Gate")
}

// unreachable reports a failed call to the kernel and returns it, so the
// reconcile is retried with backoff.
func (r *PluginReconciler) unreachable(p *smsv1.Plugin, err error) error {
	r.waiting(p, smsv1.ReasonKernelUnreachable, err.Error())
	return err
}

// setPluginConditions maps a verdict and the fiber to the conditions.
func setPluginConditions(p *smsv1.Plugin, v adminv1.Verdict, f adminv1.Fiber, approved bool) {
	gen := p.Generation
	conds := &p.Status.Conditions
	switch v.Status {
	case adminv1.StatusMounted:
		setCond(conds, gen).to(smsv1.ConditionJudged, true, smsv1.ReasonMounted, "the judge mounted version "+v.Version)
		if approved {
			setCond(conds, gen).to(smsv1.ConditionApproved, true, smsv1.ReasonApproved, "approved by a human")
		} else {
			setCond(conds, gen).to(smsv1.ConditionApproved, true, smsv1.ReasonNotRequired, "no sensitive scope or point")
		}
	case adminv1.StatusPending:
		setCond(conds, gen).to(smsv1.ConditionJudged, true, smsv1.ReasonPendingApproval, v.Reason)
		setCond(conds, gen).to(smsv1.ConditionApproved, false, smsv1.ReasonPendingApproval, v.Reason)
	default:
		reason, msg := rejection(v)
		setCond(conds, gen).to(smsv1.ConditionJudged, false, reason, msg)
		setCond(conds, gen).to(smsv1.ConditionApproved, false, reason, msg)
	}
	setMounted(p, v, f)
}

// setMounted sets Mounted and Ready from the fiber: an older version may
// keep serving while new code waits or was refused.
func setMounted(p *smsv1.Plugin, v adminv1.Verdict, f adminv1.Fiber) {
	gen, conds := p.Generation, &p.Status.Conditions
	current := f.ID != "" && f.CodeHash == p.Status.CodeHash
	switch {
	case f.ID == "":
		setCond(conds, gen).to(smsv1.ConditionMounted, false, notMountedReason(v), "not installed in the kernel")
	case !f.Enabled:
		setCond(conds, gen).to(smsv1.ConditionMounted, false, smsv1.ReasonDisabled, "installed and disabled")
	case f.State == adminv1.StateFailed:
		setCond(conds, gen).to(smsv1.ConditionMounted, false, smsv1.ReasonFailed, f.Error)
	case f.State != adminv1.StateActive:
		setCond(conds, gen).to(smsv1.ConditionMounted, false, smsv1.ReasonDependencyMissing, "the plugin is "+string(f.State)+": a dependency is missing")
	case current:
		setCond(conds, gen).to(smsv1.ConditionMounted, true, smsv1.ReasonMounted, "version "+f.Version+" is active")
	default:
		setCond(conds, gen).to(smsv1.ConditionMounted, true, smsv1.ReasonMounted, fmt.Sprintf("version %s (%s) keeps serving until the new code mounts", f.Version, shortHash(f.CodeHash)))
	}
	wantDisabled := p.Spec.Enabled != nil && !*p.Spec.Enabled
	switch {
	case current && wantDisabled && !f.Enabled:
		setCond(conds, gen).to(smsv1.ConditionReady, true, smsv1.ReasonDisabled, "installed and disabled, as the spec says")
	case current && f.Enabled && f.State == adminv1.StateActive:
		setCond(conds, gen).to(smsv1.ConditionReady, true, smsv1.ReasonMounted, "version "+f.Version+" is active")
	default:
		c := meta.FindStatusCondition(*conds, smsv1.ConditionMounted)
		reason, msg := c.Reason, c.Message
		if v.Status != adminv1.StatusMounted {
			j := meta.FindStatusCondition(*conds, smsv1.ConditionApproved)
			reason, msg = j.Reason, j.Message
		}
		setCond(conds, gen).to(smsv1.ConditionReady, false, reason, msg)
	}
}

func notMountedReason(v adminv1.Verdict) string {
	switch v.Status {
	case adminv1.StatusPending:
		return smsv1.ReasonPendingApproval
	case adminv1.StatusRejected:
		if v.RolledBack {
			return smsv1.ReasonRolledBack
		}
		reason, _ := rejection(v)
		return reason
	}
	return smsv1.ReasonFailed
}

func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// setDenied reports a plugin whose code a human (or the TTL) denied.
func setDenied(p *smsv1.Plugin, hash string, a *smsv1.Approval, f adminv1.Fiber) {
	c := meta.FindStatusCondition(a.Status.Conditions, smsv1.ConditionDenied)
	msg := "approval " + a.Name + " denied"
	if c != nil && c.Message != "" {
		msg = c.Message
	}
	p.Status.CodeHash = hash
	p.Status.Verdict = &smsv1.Verdict{Result: string(adminv1.StatusRejected), Gate: adminv1.GateApproval, Message: msg}
	p.Status.ApprovalRef = nil
	gen := p.Generation
	setCond(&p.Status.Conditions, gen).to(smsv1.ConditionJudged, true, smsv1.ReasonPendingApproval, "the policy asked for a human's approval")
	setCond(&p.Status.Conditions, gen).to(smsv1.ConditionApproved, false, smsv1.ReasonDenied, msg)
	setMounted(p, adminv1.Verdict{Status: adminv1.StatusRejected, Gate: adminv1.GateApproval}, f)
	setCond(&p.Status.Conditions, gen).to(smsv1.ConditionReady, false, smsv1.ReasonDenied, msg)
}
