package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
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

// errWait means the plugin waits on something else (its tenant, its code);
// its conditions say what.
var errWait = errors.New("waiting")

// Reconcile implements reconcile.Reconciler.
func (r *PluginReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
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
	res, err := r.reconcile(ctx, &p)
	if errors.Is(err, errWait) {
		// What it waits for (its tenant, a ConfigMap) wakes it by watch;
		// the requeue is a safety net, not the way it learns.
		res, err = ctrl.Result{RequeueAfter: r.poll()}, nil
	}
	setProgress(&p)
	p.Status.ObservedGeneration = p.Generation
	p.Status.Origin = smsv1.OriginGit
	if p.Labels[smsv1.LabelOrigin] == string(smsv1.OriginAgent) {
		p.Status.Origin = smsv1.OriginAgent
	}
	if perr := r.patchStatus(ctx, before, &p, semanticChanged(before.Status, p.Status)); perr != nil {
		return ctrl.Result{}, perr
	}
	r.announce(before, &p)
	return res, err
}

// announce records an Event when the verdict or Ready changed.
func (r *PluginReconciler) announce(before, p *smsv1.Plugin) {
	v, old := p.Status.Verdict, before.Status.Verdict
	if v == nil || (old != nil && *old == *v && before.Status.CodeHash == p.Status.CodeHash) {
		return
	}
	switch v.Result {
	case string(judge.StatusRejected):
		reason, _ := rejection(judge.Verdict{Gate: v.Gate})
		r.event(p, true, reason, v.Message)
	case string(judge.StatusPending):
		r.event(p, false, smsv1.ReasonPendingApproval, v.Message)
	default:
		r.event(p, false, smsv1.ReasonMounted, "mounted version "+p.Spec.Version)
	}
}

// run is one reconcile of one Plugin: the kernel it talks to, the
// submission its spec makes, and what the kernel holds of that plugin.
type run struct {
	kc        *adminv1.Client
	p         *smsv1.Plugin
	plug      judge.Plugin
	hash, key string
	view      adminv1.PluginStatus
	// edits are a person's changes to an agent-made spec.
	edits edits
}

// reconcile submits the plugin when its spec owns the kernel's copy and
// fills its status from the kernel. Git's Plugins own their kernel
// plugin; an agent-made Plugin mirrors it, and pushes only what a person
// changed in its spec (see Mirror).
func (r *PluginReconciler) reconcile(ctx context.Context, p *smsv1.Plugin) (ctrl.Result, error) {
	rn, err := r.begin(ctx, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	if rn.edits.toggled && fiberOf(rn.view).ID != "" {
		// A person's enabled applies to whatever the kernel runs, whatever
		// the verdict on the spec's code.
		f, err := r.toggle(ctx, rn.kc, p, fiberOf(rn.view))
		if err != nil {
			return ctrl.Result{}, r.unreachable(p, err)
		}
		rn.view.Fiber = &f
	}
	existing, err := r.approvalOf(ctx, rn)
	if err != nil {
		return ctrl.Result{}, err
	}
	if existing != nil && meta.IsStatusConditionTrue(existing.Status.Conditions, smsv1.ConditionDenied) {
		setDenied(p, rn.hash, existing, fiberOf(rn.view))
		return ctrl.Result{}, nil
	}
	v, known, err := r.verdict(ctx, rn)
	if err != nil || !known {
		return ctrl.Result{}, err // unknown: the kernel moved on; the mirror updates the spec, which wakes this
	}
	if v.Status == judge.StatusRejected && v.Retry {
		return ctrl.Result{}, r.busy(p, v)
	}
	p.Status.CodeHash, p.Status.Submission, p.Status.SubmittedGeneration = rn.hash, rn.key, p.Generation
	p.Status.Verdict = &smsv1.Verdict{Result: string(v.Status), Gate: v.Gate, Message: v.Reason}
	fiber := fiberOf(rn.view)
	if v.Status == judge.StatusMounted && (p.Labels[smsv1.LabelOrigin] != string(smsv1.OriginAgent) || rn.edits.edited) {
		if fiber, err = r.toggle(ctx, rn.kc, p, fiber); err != nil {
			return ctrl.Result{}, r.unreachable(p, err)
		}
	}
	if v.Status == judge.StatusPending {
		if err := r.ensureApproval(ctx, rn); err != nil {
			return ctrl.Result{}, err
		}
	} else {
		p.Status.ApprovalRef = nil
	}
	approved := existing != nil && meta.IsStatusConditionTrue(existing.Status.Conditions, smsv1.ConditionApproved)
	setPluginConditions(p, v, fiber, approved)
	return ctrl.Result{}, nil
}

// begin finds the plugin's kernel, builds its submission and reads what
// the kernel holds of it.
func (r *PluginReconciler) begin(ctx context.Context, p *smsv1.Plugin) (*run, error) {
	_, kc, err := r.tenant(ctx, p)
	if err != nil {
		return nil, err
	}
	plug, err := r.plugin(ctx, p)
	if err != nil {
		return nil, err
	}
	rn := &run{kc: kc, p: p, plug: plug, hash: kernel.HashCode([]byte(plug.Code)), key: submissionID(plug)}
	rn.edits = personEdits(p, rn.key)
	if rn.view, err = r.view(ctx, kc, p.Spec.ID); err != nil {
		return nil, r.unreachable(p, err)
	}
	return rn, nil
}

// verdict is the kernel's verdict on the Plugin's spec. An agent-made
// Plugin nobody edited shows what the kernel holds (known is false when
// the kernel holds something else); any other is submitted unless the
// kernel already judged this exact submission.
func (r *PluginReconciler) verdict(ctx context.Context, rn *run) (judge.Verdict, bool, error) {
	p, edited := rn.p, rn.edits.edited
	// An agent-made Plugin shows what the kernel holds unless a person's
	// edit is still to be submitted: one the kernel already judged is never
	// submitted again, or it would undo what the agent did since.
	if p.Labels[smsv1.LabelOrigin] == string(smsv1.OriginAgent) && (!edited || submitted(p, rn.key)) {
		v, known := observedVerdict(p, rn.view, rn.hash)
		return v, known, nil
	}
	v, err := r.submitOnce(ctx, rn)
	if adminv1.IsRefused(err) {
		// The kernel refused the request itself: the same spec gets the
		// same answer, so it is recorded as this submission's verdict and
		// only a new spec is submitted again.
		v, err = refusedVerdict(p, rn.hash, err), nil
	}
	if err != nil {
		return v, false, r.unreachable(p, err)
	}
	if edited && !submitted(p, rn.key) {
		r.event(p, false, "ChangedByPerson", fmt.Sprintf("%s changed the spec of this agent-made plugin; the kernel follows it", requester(p)))
		p.Status.LastEdit = &smsv1.Edit{Generation: p.Generation, By: requester(p), Result: string(v.Status), Message: verdictMessage(v)}
	}
	return v, true, nil
}

// submitOnce returns the kernel's verdict on the Plugin's spec, submitting
// it only when the kernel has not judged this exact submission yet; a
// submission refreshes rn.view.
func (r *PluginReconciler) submitOnce(ctx context.Context, rn *run) (judge.Verdict, error) {
	if v, known := knownVerdict(rn.p, rn.view, rn.hash, rn.key); known {
		return v, nil
	}
	live, err := r.live(ctx, rn.p)
	if err != nil {
		return judge.Verdict{}, err
	}
	if v, known := knownVerdict(live, rn.view, rn.hash, rn.key); known {
		return v, nil
	}
	v, err := rn.kc.Submit(ctx, rn.plug, rn.p.Annotations[smsv1.AnnotationRequestedBy])
	if err != nil {
		return v, err
	}
	rn.view, err = r.view(ctx, rn.kc, rn.p.Spec.ID)
	return v, err
}

// view reads what the kernel holds of plugin id; nothing is not an error.
func (d *Deps) view(ctx context.Context, kc *adminv1.Client, id string) (adminv1.PluginStatus, error) {
	s, err := kc.PluginStatus(ctx, id)
	if adminv1.IsNotFound(err) {
		return adminv1.PluginStatus{}, nil
	}
	return s, err
}

// observedVerdict is the verdict an agent-made Plugin shows: the kernel
// runs its code, or holds it for a human. Neither means the kernel's copy
// changed and the mirror has yet to catch up.
func observedVerdict(p *smsv1.Plugin, s adminv1.PluginStatus, hash string) (judge.Verdict, bool) {
	base := judge.Verdict{PluginID: p.Spec.ID, Version: p.Spec.Version, CodeHash: hash}
	if a := pendingFor(s, p.Spec.ID, hash); a != nil {
		base.Status, base.Gate, base.ApprovalID = judge.StatusPending, judge.GatePolicy, a.ID
		base.Reason = "waiting for a human: " + strings.Join(a.Reasons, ", ")
		return base, true
	}
	if f := fiberOf(s); f.ID != "" && f.CodeHash == hash {
		base.Status, base.Gate = judge.StatusMounted, judge.GateMount
		return base, true
	}
	return judge.Verdict{}, false
}

// knownVerdict returns the kernel's verdict on this exact submission when
// it was already made, so nothing is submitted twice.
func knownVerdict(p *smsv1.Plugin, s adminv1.PluginStatus, hash, key string) (judge.Verdict, bool) {
	if !submitted(p, key) {
		return judge.Verdict{}, false
	}
	if v, ok := observedVerdict(p, s, hash); ok {
		if v.Status == judge.StatusPending && p.Status.Verdict != nil {
			v.Reason = p.Status.Verdict.Message // the judge's own words, from the submission
		}
		return v, true
	}
	if v := p.Status.Verdict; v != nil && v.Result == string(judge.StatusRejected) {
		return judge.Verdict{PluginID: p.Spec.ID, Version: p.Spec.Version, CodeHash: hash,
			Status: judge.StatusRejected, Gate: v.Gate, Reason: v.Message}, true
	}
	return judge.Verdict{}, false
}

// live returns the Plugin as the API server has it, for knownVerdict to
// ask again before submitting. The cache may not hold the status the
// previous reconcile wrote yet (it arrives by watch), and a submission it
// does not show would be made twice; the status patch itself has already
// returned, so the live read shows it. Only the path about to submit pays
// for the read.
func (r *PluginReconciler) live(ctx context.Context, p *smsv1.Plugin) (*smsv1.Plugin, error) {
	var live smsv1.Plugin
	if err := r.reader().Get(ctx, client.ObjectKeyFromObject(p), &live); err != nil {
		return nil, err
	}
	return &live, nil
}

// toggle makes the fiber's enabled state follow spec.enabled.
func (r *PluginReconciler) toggle(ctx context.Context, kc *adminv1.Client, p *smsv1.Plugin, f kernel.FiberView) (kernel.FiberView, error) {
	want := p.Spec.Enabled == nil || *p.Spec.Enabled
	if f.ID == "" || f.Enabled == want {
		return f, nil
	}
	if want {
		return kc.Enable(ctx, p.Spec.ID)
	}
	return kc.Disable(ctx, p.Spec.ID)
}

// tenant returns the plugin's Tenant and a client for its kernel.
func (r *PluginReconciler) tenant(ctx context.Context, p *smsv1.Plugin) (*smsv1.Tenant, *adminv1.Client, error) {
	var t smsv1.Tenant
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: p.Spec.TenantRef.Name}, &t)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.waiting(p, smsv1.ReasonTenantNotFound, fmt.Sprintf("tenant %q does not exist", p.Spec.TenantRef.Name))
			return nil, nil, errWait
		}
		return nil, nil, err
	}
	kc, err := r.kernelFor(ctx, &t)
	if err != nil {
		r.waiting(p, smsv1.ReasonTenantNotReady, err.Error())
		return nil, nil, errWait
	}
	return &t, kc, nil
}

// plugin builds the kernel's form of the plugin, reading codeFrom.
func (r *PluginReconciler) plugin(ctx context.Context, p *smsv1.Plugin) (judge.Plugin, error) {
	m, err := manifestOf(p)
	if err != nil {
		r.stalled(p, smsv1.ReasonInvalidSpec, err.Error())
		return judge.Plugin{}, reconcile.TerminalError(err)
	}
	if p.Spec.Code != nil {
		return judge.Plugin{Manifest: m, Code: *p.Spec.Code}, nil
	}
	ref := p.Spec.CodeFrom
	if ref == nil || p.Labels[smsv1.LabelOrigin] == string(smsv1.OriginAgent) {
		// The webhook refuses codeFrom on an agent-made Plugin; this holds
		// where it does not run.
		err := errors.New("one of spec.code and spec.codeFrom is required")
		if ref != nil {
			err = errors.New("spec.codeFrom: an agent-made plugin's code is mirrored inline; edit spec.code instead")
		}
		r.stalled(p, smsv1.ReasonInvalidSpec, err.Error())
		return judge.Plugin{}, reconcile.TerminalError(err)
	}
	var cm corev1.ConfigMap // from the API server: the cache holds only labelled ConfigMaps
	if err := r.reader().Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: ref.Name}, &cm); err != nil {
		r.waiting(p, smsv1.ReasonReferenceNotFound, fmt.Sprintf("spec.codeFrom: configmap %s: %v", ref.Name, err))
		return judge.Plugin{}, errWait
	}
	code, ok := cm.Data[ref.Key]
	if !ok {
		r.waiting(p, smsv1.ReasonReferenceNotFound, fmt.Sprintf("spec.codeFrom: configmap %s has no key %q", ref.Name, ref.Key))
		return judge.Plugin{}, errWait
	}
	return judge.Plugin{Manifest: m, Code: code}, nil
}

// fiberOf is the plugin's fiber, or the zero view when none is installed.
func fiberOf(s adminv1.PluginStatus) kernel.FiberView {
	if s.Fiber == nil {
		return kernel.FiberView{}
	}
	return *s.Fiber
}

// pendingFor returns the pending approval of plugin id's code hash, or nil.
func pendingFor(s adminv1.PluginStatus, id, hash string) *judge.Approval {
	for i := range s.Pending {
		if a := &s.Pending[i]; a.PluginID == id && a.CodeHash == hash {
			return a
		}
	}
	return nil
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
		if err := kc.Uninstall(ctx, p.Spec.ID); err != nil {
			return err
		}
		r.event(p, false, "Uninstalled", "uninstalled "+p.Spec.ID+" from tenant "+t.Name)
	}
	controllerutil.RemoveFinalizer(p, smsv1.FinalizerUninstall)
	return r.Client.Update(ctx, p)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
