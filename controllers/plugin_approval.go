package controllers

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// The approval phase of a Plugin's reconcile: which Approval governs the
// submission's code, and the Approval a pending request needs, created
// when none answers it.

// approvalOf returns the Approval that governs the run's submission, or
// nil. While the kernel asks about it, that is the Approval answering the
// kernel's request (approvalFor). Otherwise it is the newest usable one
// for the same code and declaration, a decided one first: a denial the
// kernel already applied keeps the Plugin from being submitted again.
func (r *PluginReconciler) approvalOf(ctx context.Context, rn *run) (*smsv1.Approval, error) {
	decl := DeclarationOf(rn.plug.Manifest)
	if pending := pendingOf(rn.view, rn.p.Spec.ID, rn.hash, decl); pending != nil {
		return r.approvalFor(ctx, rn, pending)
	}
	approvals, err := r.approvalsOf(ctx, rn.p.Namespace, rn.p.Name)
	if err != nil {
		return nil, err
	}
	var found *smsv1.Approval
	for i := range approvals {
		if a := &approvals[i]; usable(a) && mine(a, rn.p) && a.Spec.CodeHash == rn.hash && covers(a, decl) {
			found = pick(found, a)
		}
	}
	if found == nil || final(found) || found.Spec.KernelApprovalID == "" || fiberOf(rn.view).CodeHash == rn.hash {
		return found, nil
	}
	return r.settled(ctx, found)
}

// settled returns Approval a as the API server has it, once the kernel no
// longer holds its request and runs none of its code: the approval
// controller may have carried a decision (a person's, or the TTL's) to
// the kernel and not yet recorded it, which the cache would show as still
// undecided, and the Plugin would submit the denied code again. While a
// decision is on its way, it waits (errWait): the Approval's status
// change wakes it.
func (r *PluginReconciler) settled(ctx context.Context, a *smsv1.Approval) (*smsv1.Approval, error) {
	var live smsv1.Approval
	if err := r.reader().Get(ctx, types.NamespacedName{Namespace: a.Namespace, Name: a.Name}, &live); err != nil {
		return nil, ignoreNotFound(err)
	}
	if usable(&live) && !final(&live) && deciding(&live) {
		return nil, fmt.Errorf("approval %s is being carried to the kernel: %w", live.Name, errWait)
	}
	if !usable(&live) {
		return nil, nil
	}
	return &live, nil
}

// approvalFor returns the Approval answering the kernel's pending
// request, or nil when none does and a human must be asked: one the
// operator made for this kernel approval id, or a pre-approval naming the
// request's code and declaration. An Approval already Approved or Denied
// answered an earlier request with the same id (the kernel drops a
// request once decided), unless the kernel has since dropped this one
// too: the view may predate the decision, so the kernel is asked again.
func (r *PluginReconciler) approvalFor(ctx context.Context, rn *run, pending *adminv1.Approval) (*smsv1.Approval, error) {
	ns, plugin := rn.p.Namespace, rn.p.Name
	byKernel, err := r.approvalsByKernelID(ctx, ns, plugin, pending.ID)
	if err != nil {
		return nil, err
	}
	all, err := r.approvalsOf(ctx, ns, plugin)
	if err != nil {
		return nil, err
	}
	for i := range all { // the pre-approvals of this code and declaration
		if a := &all[i]; a.Spec.KernelApprovalID == "" {
			byKernel = append(byKernel, *a)
		}
	}
	var open, closed *smsv1.Approval
	for i := range byKernel {
		switch a := &byKernel[i]; {
		case !usable(a) || !answers(a, rn.p, pending):
		case final(a):
			closed = pick(closed, a)
		default:
			open = pick(open, a)
		}
	}
	if open != nil || closed == nil {
		return open, nil
	}
	s, err := r.view(ctx, rn.kc, rn.p.Spec.ID)
	if err != nil {
		return nil, unreachable(err)
	}
	if pendingByID(s, pending.ID) != nil {
		return nil, nil // asked again since: a new request for a human
	}
	return closed, nil
}

// ensureApproval finds the Approval answering the kernel's pending
// request for the run's submission (o.approval), creating one (owned by
// the Plugin) when none does.
func (r *PluginReconciler) ensureApproval(ctx context.Context, rn *run, o *pluginObservation) error {
	p := rn.p
	pending := pendingOf(rn.view, p.Spec.ID, rn.hash, DeclarationOf(rn.plug.Manifest))
	if pending == nil {
		return nil
	}
	existing, err := r.approvalFor(ctx, rn, pending)
	if err != nil {
		return err
	}
	if existing == nil {
		if existing, err = r.createApproval(ctx, p, pending); errors.Is(err, errNamesTaken) {
			return waitFor(smsv1.ReasonPendingApproval, err.Error())
		} else if err != nil {
			return err
		}
		r.event(p, false, "ApprovalRequested", fmt.Sprintf("approval %s asks for a human: %s; the plugin declares %s",
			existing.Name, strings.Join(pending.Reasons, ", "), DescribeDeclaration(*existing.Spec.Declaration)))
	}
	o.approval = &corev1.LocalObjectReference{Name: existing.Name}
	return nil
}

// createApproval creates the Approval of a pending request under the
// first free name of its series. A name taken by an Approval for this
// same request that the cache does not show yet is that Approval.
func (r *PluginReconciler) createApproval(ctx context.Context, p *smsv1.Plugin, pending *adminv1.Approval) (*smsv1.Approval, error) {
	series, err := r.approvalsByKernelID(ctx, p.Namespace, p.Name, pending.ID)
	if err != nil {
		return nil, err
	}
	decl := DeclarationOf(pending.Manifest)
	for n := len(series); n < len(series)+maxNameTries; n++ {
		a := &smsv1.Approval{
			ObjectMeta: metav1.ObjectMeta{Name: ApprovalName(p.Name, pending.ID, n), Namespace: p.Namespace,
				Labels: map[string]string{smsv1.LabelTenant: p.Spec.TenantRef.Name, labelPlugin: p.Name}},
			Spec: smsv1.ApprovalSpec{PluginRef: corev1.LocalObjectReference{Name: p.Name}, PluginID: pending.PluginID,
				CodeHash: pending.CodeHash, KernelApprovalID: pending.ID, Declaration: &decl,
				Reasons: pending.Reasons, RequestedBy: pending.RequestedBy, Replaces: replacesOf(pending.Replaces)},
		}
		if err := controllerutil.SetControllerReference(p, a, r.Scheme); err != nil {
			return nil, err
		}
		err := r.Client.Create(ctx, a)
		if err == nil {
			return a, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create approval %s: %w", a.Name, err)
		}
		var cur smsv1.Approval
		if err := r.reader().Get(ctx, types.NamespacedName{Namespace: a.Namespace, Name: a.Name}, &cur); err != nil {
			return nil, fmt.Errorf("read approval %s: %w", a.Name, err)
		}
		if answers(&cur, p, pending) && usable(&cur) && !final(&cur) {
			return &cur, nil
		}
	}
	return nil, fmt.Errorf("%w: approval names %s to %s are taken by Approvals that do not answer kernel approval %s; "+
		"delete them so the operator can ask a human", errNamesTaken, ApprovalName(p.Name, pending.ID, len(series)),
		ApprovalName(p.Name, pending.ID, len(series)+maxNameTries-1), pending.ID)
}

// errNamesTaken means every name createApproval tried was taken by an
// Approval that does not answer the request.
var errNamesTaken = errors.New("no free approval name")

// replacesOf is what the kernel's request says its plugin would replace,
// as an Approval shows it; nil for a new plugin.
func replacesOf(r *adminv1.Replaced) *smsv1.ApprovalReplaces {
	if r == nil {
		return nil
	}
	out := &smsv1.ApprovalReplaces{Version: r.Version, CodeHash: r.CodeHash, CodeDiff: r.CodeDiff, Note: r.Note}
	if d := smsv1.Declaration(r.Added.Normal()); !reflect.DeepEqual(d, smsv1.Declaration{}) {
		out.Added = &d
	}
	if d := smsv1.Declaration(r.Removed.Normal()); !reflect.DeepEqual(d, smsv1.Declaration{}) {
		out.Removed = &d
	}
	return out
}
