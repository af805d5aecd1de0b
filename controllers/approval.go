package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// DefaultApprovalTTL is how long an Approval waits for a decision when the
// tenant's policy sets no approvalTTL.
const DefaultApprovalTTL = 24 * time.Hour

// operatorName decides on the kernel for TTL expiries.
const operatorName = "sms-operator"

// ApprovalReconciler carries decisions to the kernel.
type ApprovalReconciler struct {
	*Deps
	// Now is the clock for TTLs. Default time.Now.
	Now func() time.Time
}

// +kubebuilder:rbac:groups=sms.dev,resources=approvals,verbs=get;list;watch
// +kubebuilder:rbac:groups=sms.dev,resources=approvals/status,verbs=patch

// Reconcile implements reconcile.Reconciler: the phases (reconcile, or
// supersede once decided) fill an observation, and one deferred status
// patch writes what approvalStatus makes of it.
func (r *ApprovalReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	var a smsv1.Approval
	if err := r.Client.Get(ctx, req.NamespacedName, &a); err != nil {
		return ctrl.Result{}, ignoreNotFound(err)
	}
	if !a.DeletionTimestamp.IsZero() || meta.IsStatusConditionTrue(a.Status.Conditions, smsv1.ConditionExpired) {
		return ctrl.Result{}, nil
	}
	wasFinal := final(&a)
	before := a.DeepCopy()
	o := &approvalObservation{}
	defer func() {
		a.Status = approvalStatus(before, o)
		if perr := r.patchStatus(ctx, before, &a, !equality.Semantic.DeepEqual(before.Status, a.Status)); perr != nil {
			res, retErr = ctrl.Result{}, perr
			return
		}
		if !wasFinal && final(&a) {
			c := meta.FindStatusCondition(a.Status.Conditions, smsv1.ConditionReady)
			r.event(&a, c.Reason != smsv1.ReasonApproved, c.Reason, c.Message)
		}
	}()
	if wasFinal {
		return ctrl.Result{}, r.supersede(ctx, &a, o)
	}
	return r.reconcile(ctx, &a, o)
}

// codeHashOf is the hash of the code the Plugin asks for: its inline
// spec.code, else the last code the Plugin reconciler read from its
// ConfigMap. The spec, not the status, so an Approval created in the same
// reconcile that moved the status on is never taken for a stale one.
func codeHashOf(p *smsv1.Plugin) string {
	if p.Spec.Code != nil {
		return adminv1.HashCode([]byte(*p.Spec.Code))
	}
	return p.Status.CodeHash
}

// deciding reports whether a decision on the approval exists: a person's
// spec.decision, or the TTL's (Ready's reason TTLExpired), recorded before
// it is carried to the kernel.
func deciding(a *smsv1.Approval) bool {
	c := meta.FindStatusCondition(a.Status.Conditions, smsv1.ConditionReady)
	return a.Spec.Decision != "" || (c != nil && c.Reason == smsv1.ReasonTTLExpired)
}

// final reports whether the approval reached Approved, Denied or Expired.
func final(a *smsv1.Approval) bool {
	for _, t := range []string{smsv1.ConditionApproved, smsv1.ConditionDenied, smsv1.ConditionExpired} {
		if meta.IsStatusConditionTrue(a.Status.Conditions, t) {
			return true
		}
	}
	return false
}

// supersede expires a decided approval once its plugin's code moved on:
// the decision stays in the conditions, and Expired says it no longer
// applies to the plugin.
func (r *ApprovalReconciler) supersede(ctx context.Context, a *smsv1.Approval, o *approvalObservation) error {
	var p smsv1.Plugin
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: a.Namespace, Name: a.Spec.PluginRef.Name}, &p); err != nil {
		return ignoreNotFound(err)
	}
	if h := codeHashOf(&p); h != "" && h != a.Spec.CodeHash {
		o.set(approvalSuperseded, smsv1.ReasonCodeChanged, fmt.Sprintf("plugin %s's code changed since this decision", p.Name))
		return nil
	}
	if reason, msg := declarationMismatch(a, &p); reason == smsv1.ReasonDeclarationChanged {
		o.set(approvalSuperseded, reason, msg)
	}
	return nil
}

// reconcile carries an undecided Approval's decision to the kernel, or
// waits for one, recording what became of it in o.
func (r *ApprovalReconciler) reconcile(ctx context.Context, a *smsv1.Approval, o *approvalObservation) (ctrl.Result, error) {
	var p smsv1.Plugin
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: a.Namespace, Name: a.Spec.PluginRef.Name}, &p); err != nil {
		return ctrl.Result{}, ignoreNotFound(err)
	}
	if !mine(a, &p) {
		o.set(approvalExpired, smsv1.ReasonUnowned, fmt.Sprintf("this Approval names kernel request %s, but plugin %s does not control it: "+
			"only the operator's Approvals answer a kernel request, and a decision here never reaches the kernel", a.Spec.KernelApprovalID, p.Name))
		return ctrl.Result{}, nil
	}
	if h := codeHashOf(&p); h != "" && h != a.Spec.CodeHash {
		o.set(approvalExpired, smsv1.ReasonCodeChanged, fmt.Sprintf("plugin %s's code changed since this approval was asked for; a new Approval asks about the new code", p.Name))
		return ctrl.Result{}, nil
	}
	if reason, msg := declarationMismatch(a, &p); reason != "" {
		o.set(approvalExpired, reason, msg)
		return ctrl.Result{}, nil
	}
	var t smsv1.Tenant
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: a.Namespace, Name: p.Spec.TenantRef.Name}, &t); err != nil {
		return ctrl.Result{}, err
	}
	if a.Spec.Decision == "" {
		return r.awaiting(ctx, a, &t, o)
	}
	if msg := selfApproval(a, &p, &t); msg != "" {
		o.set(approvalSelf, smsv1.ReasonSelfApproval, msg)
		r.event(a, true, smsv1.ReasonSelfApproval, msg)
		return ctrl.Result{}, nil
	}
	kc, err := r.kernelFor(ctx, &t)
	if err != nil {
		o.set(approvalWaiting, smsv1.ReasonTenantNotReady, err.Error())
		return ctrl.Result{RequeueAfter: r.poll()}, nil
	}
	if a.Spec.KernelApprovalID == "" {
		return r.preApproved(ctx, approvalCall{a: a, kc: kc, o: o})
	}
	return r.apply(ctx, approvalCall{a: a, kc: kc, o: o}, a.Spec.KernelApprovalID)
}

// selfApproval returns why an approving decision may not reach the kernel
// under the tenant's forbidSelfApproval, or "". The webhook refuses a
// self-approval when it is made; this catches one written ahead (say, in
// git) before its decider created the Plugin, which the webhook could not
// compare with a requester that did not exist yet.
func selfApproval(a *smsv1.Approval, p *smsv1.Plugin, t *smsv1.Tenant) string {
	by := a.Annotations[smsv1.AnnotationDecidedBy]
	if a.Spec.Decision != smsv1.DecisionApproved || !t.Spec.Judge.ForbidSelfApproval || by == "" {
		return ""
	}
	if !smsv1.IsRequester(by, a, p, t) {
		return ""
	}
	return fmt.Sprintf("%s approved plugin %s, which %s requested: tenant %s forbids self-approval; someone else must approve",
		by, p.Name, by, t.Name)
}

// awaiting waits for a decision until the TTL denies the approval.
func (r *ApprovalReconciler) awaiting(ctx context.Context, a *smsv1.Approval, t *smsv1.Tenant, o *approvalObservation) (ctrl.Result, error) {
	ttl := DefaultApprovalTTL
	if t.Spec.Judge.ApprovalTTL != nil {
		ttl = t.Spec.Judge.ApprovalTTL.Duration
	}
	left := a.CreationTimestamp.Add(ttl).Sub(r.now())
	if left > 0 {
		msg := fmt.Sprintf("waiting for a human to set spec.decision (denied after %s)", ttl)
		o.set(approvalAwaiting, smsv1.ReasonAwaitingDecision, msg)
		return ctrl.Result{RequeueAfter: left}, nil
	}
	return r.denyLate(ctx, approvalCall{a: a, o: o}, t, ttl)
}

// denyLate denies an approval nobody decided within ttl: first it records
// the denial as on its way, then it carries it to the kernel.
func (r *ApprovalReconciler) denyLate(ctx context.Context, c approvalCall, t *smsv1.Tenant, ttl time.Duration) (ctrl.Result, error) {
	a := c.a
	if !deciding(a) {
		// Recorded before the kernel hears of it, so a Plugin that sees
		// the request gone knows a denial is on its way (see
		// PluginReconciler.settled).
		msg := fmt.Sprintf("no decision within the approval TTL of %s: denying it", ttl)
		c.o.set(approvalWaiting, smsv1.ReasonTTLExpired, msg)
		return ctrl.Result{RequeueAfter: time.Second}, nil // the status change requeues it first
	}
	kc, err := r.kernelFor(ctx, t)
	if err != nil {
		return ctrl.Result{RequeueAfter: r.poll()}, nil
	}
	_, err = kc.Reject(ctx, a.Spec.KernelApprovalID, operatorName+" (approval TTL expired)", a.Spec.CodeHash)
	if err != nil && !adminv1.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	c.o.set(approvalTimedOut, smsv1.ReasonTTLExpired, fmt.Sprintf("no decision within the approval TTL of %s", ttl))
	c.o.by, c.o.at = operatorName, &metav1.Time{Time: r.now()}
	return ctrl.Result{}, nil
}

// approvalCall is an Approval being carried to its kernel, and what its
// reconcile observed.
type approvalCall struct {
	a  *smsv1.Approval
	kc *adminv1.Client
	o  *approvalObservation
}

// apply carries the decision to the kernel, bound to the code hash, with
// the decider's groups. A kernel that needs more approvers counts it and
// keeps waiting: the Approval shows the approvals counted and is looked
// at again until the request is decided.
func (r *ApprovalReconciler) apply(ctx context.Context, c approvalCall, id string) (ctrl.Result, error) {
	a, kc := c.a, c.kc
	by := a.Annotations[smsv1.AnnotationDecidedBy]
	if by == "" {
		by = "unknown"
	}
	if a.Spec.Decision == smsv1.DecisionApproved {
		if counted, err := r.counted(ctx, c, id, by); err != nil || counted {
			return ctrl.Result{RequeueAfter: r.poll()}, err
		}
	}
	var v adminv1.Verdict
	var err error
	if a.Spec.Decision == smsv1.DecisionApproved {
		v, err = kc.ApproveAs(ctx, id, adminv1.Decision{By: by, CodeHash: a.Spec.CodeHash, Groups: decidedGroups(a)})
	} else {
		_, err = kc.Reject(ctx, id, by, a.Spec.CodeHash)
	}
	switch {
	case adminv1.IsConflict(err):
		c.o.set(approvalExpired, smsv1.ReasonCodeChanged, "the kernel's pending approval is bound to other code: "+err.Error())
		return ctrl.Result{}, nil
	case adminv1.IsForbidden(err):
		c.o.set(approvalExpired, smsv1.ReasonNotCounted, "the kernel did not count this approval: "+err.Error())
		return ctrl.Result{}, nil
	case adminv1.IsNotFound(err):
		if done, derr := r.alreadyApplied(ctx, c, id); derr != nil || !done {
			if derr == nil {
				c.o.set(approvalExpired, smsv1.ReasonCodeChanged, "the kernel no longer waits for this approval")
			}
			return ctrl.Result{}, derr
		}
	case err != nil:
		return ctrl.Result{}, err
	case v.Status == adminv1.StatusPending:
		c.o.set(approvalWaiting, smsv1.ReasonAwaitingApprovers, v.Reason)
		_, err := r.counted(ctx, c, id, by) // shows the approvals counted
		return ctrl.Result{RequeueAfter: r.poll()}, err
	}
	r.decided(c, by)
	return ctrl.Result{}, nil
}

// counted reports whether the kernel's pending request id has counted
// by's approval already; it records the approvals counted so far.
func (r *ApprovalReconciler) counted(ctx context.Context, c approvalCall, id, by string) (bool, error) {
	s, err := r.view(ctx, c.kc, c.a.Spec.PluginID)
	if err != nil {
		return false, err
	}
	p := pendingByID(s, id)
	if p == nil || len(p.Decisions) == 0 {
		return false, nil
	}
	c.o.decisions = make([]smsv1.ApprovalDecision, 0, len(p.Decisions))
	mine := false
	for _, d := range p.Decisions {
		c.o.decisions = append(c.o.decisions, smsv1.ApprovalDecision{By: d.By, At: metav1.Time{Time: d.At}, Groups: d.Groups})
		mine = mine || d.By == by
	}
	if mine && c.o.state != approvalWaiting {
		c.o.set(approvalWaiting, smsv1.ReasonAwaitingApprovers, fmt.Sprintf(
			"the kernel counted this approval (%d so far) and waits for the tenant's other approvers", len(p.Decisions)))
	}
	return mine, nil
}

// decidedGroups reads the decider's groups the webhook stamped, or nil.
func decidedGroups(a *smsv1.Approval) []string {
	var groups []string
	if json.Unmarshal([]byte(a.Annotations[smsv1.AnnotationDecidedGroups]), &groups) != nil {
		return nil
	}
	return groups
}

// preApproved applies an Approval written ahead of the submission (for
// example kept in git next to its Plugin): it waits until the kernel holds
// the plugin's code for approval under the declaration the Approval names
// (reconcile has checked it is the Plugin's), and does nothing when the
// code mounted without needing one. A request for the same code under
// another declaration is not this Approval's to answer.
func (r *ApprovalReconciler) preApproved(ctx context.Context, c approvalCall) (ctrl.Result, error) {
	a := c.a
	s, err := r.view(ctx, c.kc, a.Spec.PluginID)
	if err != nil {
		return ctrl.Result{}, err
	}
	if pending := pendingOf(s, a.Spec.PluginID, a.Spec.CodeHash, *a.Spec.Declaration); pending != nil {
		return r.apply(ctx, c, pending.ID)
	}
	if f := fiberOf(s); f.ID != "" && f.CodeHash == a.Spec.CodeHash && a.Spec.Decision == smsv1.DecisionApproved {
		r.decided(c, a.Annotations[smsv1.AnnotationDecidedBy])
		return ctrl.Result{}, nil
	}
	msg := "decided ahead; waiting for the kernel to ask about this code and declaration"
	c.o.set(approvalWaiting, smsv1.ReasonAwaitingDecision, msg)
	return ctrl.Result{RequeueAfter: r.poll()}, nil
}

// alreadyApplied reports whether an approval the kernel no longer has was
// applied before (a restart between the kernel's answer and the status
// update): the approved code runs, or the denied request (kernel
// approval id) does not wait.
func (r *ApprovalReconciler) alreadyApplied(ctx context.Context, c approvalCall, id string) (bool, error) {
	a := c.a
	s, err := r.view(ctx, c.kc, a.Spec.PluginID)
	if err != nil {
		return false, err
	}
	if a.Spec.Decision == smsv1.DecisionApproved {
		f := fiberOf(s)
		return f.ID != "" && f.CodeHash == a.Spec.CodeHash, nil
	}
	return pendingByID(s, id) == nil, nil
}

// decided records an applied decision.
func (r *ApprovalReconciler) decided(c approvalCall, by string) {
	c.o.state = approvalDenied
	if c.a.Spec.Decision == smsv1.DecisionApproved {
		c.o.state = approvalApproved
	}
	c.o.by, c.o.at = by, decidedAt(c.a, r.now())
}

// decidedAt reads the webhook's decided-at annotation, else now.
func decidedAt(a *smsv1.Approval, now time.Time) *metav1.Time {
	if at, err := time.Parse(time.RFC3339, a.Annotations[smsv1.AnnotationDecidedAt]); err == nil {
		return &metav1.Time{Time: at}
	}
	return &metav1.Time{Time: now}
}

func (r *ApprovalReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
