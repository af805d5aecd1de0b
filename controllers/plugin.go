package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// PluginReconciler submits Plugins to their tenant's kernel.
type PluginReconciler struct {
	*Deps
}

// +kubebuilder:rbac:groups=sms.dev,resources=plugins,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=sms.dev,resources=plugins/status,verbs=patch
// +kubebuilder:rbac:groups=sms.dev,resources=plugins/finalizers,verbs=update
// +kubebuilder:rbac:groups=sms.dev,resources=approvals,verbs=get;list;watch;create

// Reconcile implements reconcile.Reconciler: the finalizer first, then
// the phases (reconcile), which fill an observation, and one deferred
// status patch of what pluginStatus makes of it and of their error.
func (r *PluginReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	var p smsv1.Plugin
	if err := r.Client.Get(ctx, req.NamespacedName, &p); err != nil {
		return ctrl.Result{}, ignoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, &p)
	}
	if !controllerutil.ContainsFinalizer(&p, smsv1.FinalizerUninstall) {
		controllerutil.AddFinalizer(&p, smsv1.FinalizerUninstall)
		if err := r.Client.Update(ctx, &p); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := p.DeepCopy()
	o := &pluginObservation{}
	var err error
	defer func() {
		p.Status = pluginStatus(before, o, err)
		if perr := r.patchStatus(ctx, before, &p, !equality.Semantic.DeepEqual(before.Status, p.Status)); perr != nil {
			res, retErr = ctrl.Result{}, perr
			return
		}
		r.announce(before, &p)
	}()
	err = r.reconcile(ctx, &p, o)
	return outcome(ctrl.Result{}, err, r.poll())
}

// announce records an Event when the verdict changed to one a person
// should notice: a rejection or a wait for approval, and when the kernel
// quarantined the plugin. An ordinary mount records none; its conditions
// say it (each Event is one more write to the API server per Plugin).
func (r *PluginReconciler) announce(before, p *smsv1.Plugin) {
	if q := meta.FindStatusCondition(p.Status.Conditions, smsv1.ConditionQuarantined); q != nil &&
		meta.FindStatusCondition(before.Status.Conditions, smsv1.ConditionQuarantined) == nil {
		r.event(p, true, smsv1.ReasonQuarantined, q.Message)
	}
	v, old := p.Status.Verdict, before.Status.Verdict
	if v == nil || (old != nil && *old == *v && before.Status.CodeHash == p.Status.CodeHash) {
		return
	}
	switch v.Result {
	case smsv1.VerdictRejected:
		reason, _ := rejection(adminv1.Verdict{Gate: v.Gate})
		r.event(p, true, reason, v.Message)
	case smsv1.VerdictPending:
		r.event(p, false, smsv1.ReasonPendingApproval, v.Message)
	}
}

// run is one reconcile of one Plugin: the kernel it talks to, the
// submission its spec makes, and what the kernel holds of that plugin.
type run struct {
	kc       *adminv1.Client
	p        *smsv1.Plugin
	plug     adminv1.Plugin
	hash, id string
	view     adminv1.PluginStatus
	// edits are a person's changes to an agent-made spec.
	edits edits
}

// reconcile runs the phases of one Plugin's reconcile, recording what
// they find in o: the kernel and the submission (begin), a person's
// toggle, the Approval that governs the code (approvalOf), the kernel's
// verdict (verdict), the fiber following spec.enabled, the Approval a
// pending request needs (ensureApproval). Git's Plugins own their kernel
// plugin; an agent-made Plugin mirrors it, and pushes only what a person
// changed in its spec (see Mirror).
func (r *PluginReconciler) reconcile(ctx context.Context, p *smsv1.Plugin, o *pluginObservation) error {
	rn, err := r.begin(ctx, p, o)
	if err != nil {
		return err
	}
	if rn.edits.toggled && fiberOf(rn.view).ID != "" {
		// A person's enabled applies to whatever the kernel runs, whatever
		// the verdict on the spec's code.
		f, err := r.toggle(ctx, rn.kc, p, fiberOf(rn.view))
		if err != nil {
			return unreachable(err)
		}
		rn.view.Fiber = &f
	}
	o.fiber = fiberOf(rn.view)
	existing, err := r.approvalOf(ctx, rn)
	if err != nil {
		return err
	}
	if existing != nil && meta.IsStatusConditionTrue(existing.Status.Conditions, smsv1.ConditionDenied) {
		o.denial = existing
		return verdictOutcome(o)
	}
	v, known, err := r.verdict(ctx, rn, o)
	if err != nil || !known {
		return err // unknown: the kernel moved on; the mirror updates the spec, which wakes this
	}
	if v.Status == adminv1.StatusRejected && v.Retry {
		return busy(v)
	}
	o.verdict, o.fiber = &v, fiberOf(rn.view)
	if v.Status == adminv1.StatusMounted && (p.Labels[smsv1.LabelOrigin] != string(smsv1.OriginAgent) || rn.edits.edited) {
		if o.fiber, err = r.toggle(ctx, rn.kc, p, o.fiber); err != nil {
			return unreachable(err)
		}
	}
	if v.Status == adminv1.StatusPending {
		if err := r.ensureApproval(ctx, rn, o); err != nil {
			return err
		}
	}
	o.approved = existing != nil && meta.IsStatusConditionTrue(existing.Status.Conditions, smsv1.ConditionApproved)
	o.judged = true
	return verdictOutcome(o)
}

// begin finds the plugin's kernel, builds its submission and reads what
// the kernel holds of it.
func (r *PluginReconciler) begin(ctx context.Context, p *smsv1.Plugin, o *pluginObservation) (*run, error) {
	kc, err := r.tenantKernel(ctx, p)
	if err != nil {
		return nil, err
	}
	plug, err := r.plugin(ctx, p)
	if err != nil {
		return nil, err
	}
	rn := &run{kc: kc, p: p, plug: plug, hash: adminv1.HashCode([]byte(plug.Code)), id: submissionID(plug)}
	o.hash, o.id = rn.hash, rn.id
	rn.edits = personEdits(p, rn.id)
	if rn.view, err = r.view(ctx, kc, p.Spec.ID); err != nil {
		return nil, unreachable(err)
	}
	return rn, nil
}

// unreachable is a failed call to the kernel: Reconciling, retried with
// backoff.
func unreachable(err error) error {
	return &retryError{reason: smsv1.ReasonKernelUnreachable, err: err}
}

// tenantKernel returns a client for the kernel of the plugin's Tenant.
func (r *PluginReconciler) tenantKernel(ctx context.Context, p *smsv1.Plugin) (*adminv1.Client, error) {
	var t smsv1.Tenant
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: p.Spec.TenantRef.Name}, &t)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, waitFor(smsv1.ReasonTenantNotFound, fmt.Sprintf("tenant %q does not exist", p.Spec.TenantRef.Name))
		}
		return nil, err
	}
	kc, err := r.kernelFor(ctx, &t)
	if err != nil {
		return nil, waitFor(smsv1.ReasonTenantNotReady, err.Error())
	}
	return kc, nil
}

// plugin builds the kernel's form of the plugin, reading codeFrom.
func (r *PluginReconciler) plugin(ctx context.Context, p *smsv1.Plugin) (adminv1.Plugin, error) {
	m, err := manifestOf(p)
	if err != nil {
		return adminv1.Plugin{}, invalidSpec(err)
	}
	if p.Spec.Code != nil {
		return adminv1.Plugin{Manifest: m, Code: *p.Spec.Code}, nil
	}
	ref := p.Spec.CodeFrom
	if ref == nil || p.Labels[smsv1.LabelOrigin] == string(smsv1.OriginAgent) {
		// The webhook refuses codeFrom on an agent-made Plugin; this holds
		// where it does not run.
		err := errors.New("one of spec.code and spec.codeFrom is required")
		if ref != nil {
			err = errors.New("spec.codeFrom: an agent-made plugin's code is mirrored inline; edit spec.code instead")
		}
		return adminv1.Plugin{}, invalidSpec(err)
	}
	var cm corev1.ConfigMap // from the API server: the cache holds only labelled ConfigMaps
	if err := r.reader().Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: ref.Name}, &cm); err != nil {
		return adminv1.Plugin{}, waitFor(smsv1.ReasonReferenceNotFound, fmt.Sprintf("spec.codeFrom: configmap %s: %v", ref.Name, err))
	}
	code, ok := cm.Data[ref.Key]
	if !ok {
		return adminv1.Plugin{}, waitFor(smsv1.ReasonReferenceNotFound, fmt.Sprintf("spec.codeFrom: configmap %s has no key %q", ref.Name, ref.Key))
	}
	return adminv1.Plugin{Manifest: m, Code: code}, nil
}

// finalize uninstalls the plugin from its kernel, then lets it go. A
// tenant that is gone takes its plugins with it.
func (r *PluginReconciler) finalize(ctx context.Context, p *smsv1.Plugin) error {
	if !controllerutil.ContainsFinalizer(p, smsv1.FinalizerUninstall) {
		return nil
	}
	var t smsv1.Tenant
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: p.Spec.TenantRef.Name}, &t)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && !t.DeletionTimestamp.IsZero()):
	case err != nil:
		return err
	default:
		kc, err := r.kernelFor(ctx, &t)
		if err != nil {
			return fmt.Errorf("uninstall %s: %w", p.Spec.ID, err)
		}
		uninstall := kc.Uninstall
		if p.Annotations[smsv1.AnnotationForceUninstall] == "true" {
			uninstall = kc.ForceUninstall
		}
		if err := uninstall(ctx, p.Spec.ID); err != nil {
			if adminv1.IsConflict(err) {
				r.event(p, true, "UninstallRefused", err.Error()+" (annotate the Plugin "+
					smsv1.AnnotationForceUninstall+"=true to uninstall it anyway)")
			}
			return err
		}
		r.event(p, false, "Uninstalled", "uninstalled "+p.Spec.ID+" from tenant "+t.Name)
	}
	controllerutil.RemoveFinalizer(p, smsv1.FinalizerUninstall)
	r.memo.gone(p.UID)
	return r.Client.Update(ctx, p)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
