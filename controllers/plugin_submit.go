package controllers

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// verdict is the kernel's verdict on the Plugin's spec (a person's
// edit it answers is recorded in o). An agent-made
// Plugin nobody edited shows what the kernel holds (known is false when
// the kernel holds something else); any other is submitted unless the
// kernel already judged this exact submission.
func (r *PluginReconciler) verdict(ctx context.Context, rn *run, o *pluginObservation) (adminv1.Verdict, bool, error) {
	p, edited := rn.p, rn.edits.edited
	// An agent-made Plugin shows what the kernel holds unless a person's
	// edit is still to be submitted: one the kernel already judged is never
	// submitted again, or it would undo what the agent did since.
	if p.Labels[smsv1.LabelOrigin] == string(smsv1.OriginAgent) && (!edited || submitted(p, rn.id)) {
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
		return v, false, unreachable(err)
	}
	if edited && !submitted(p, rn.id) {
		r.event(p, false, "ChangedByPerson", fmt.Sprintf("%s changed the spec of this agent-made plugin; the kernel follows it", requester(p)))
		o.lastEdit = &smsv1.Edit{Generation: p.Generation, By: requester(p), Result: smsv1.VerdictResult(v.Status), Message: verdictMessage(v)}
	}
	return v, true, nil
}

// submitOnce returns the kernel's verdict on the Plugin's spec, submitting
// it only when the kernel has not judged this exact submission yet; a
// submission refreshes rn.view.
func (r *PluginReconciler) submitOnce(ctx context.Context, rn *run) (adminv1.Verdict, error) {
	if v, known := knownVerdict(rn.p, rn.view, rn.hash, rn.id); known {
		return v, nil
	}
	if !r.memo.untouched(rn.p) {
		live, err := r.live(ctx, rn.p)
		if err != nil {
			return adminv1.Verdict{}, err
		}
		if v, known := knownVerdict(live, rn.view, rn.hash, rn.id); known {
			return v, nil
		}
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
func observedVerdict(p *smsv1.Plugin, s adminv1.PluginStatus, hash string) (adminv1.Verdict, bool) {
	base := adminv1.Verdict{PluginID: p.Spec.ID, Version: p.Spec.Version, CodeHash: hash}
	if a := pendingFor(s, p.Spec.ID, hash); a != nil {
		base.Status, base.Gate, base.ApprovalID = adminv1.StatusPending, adminv1.GatePolicy, a.ID
		base.Reason = "waiting for a human: " + strings.Join(a.Reasons, ", ")
		return base, true
	}
	if f := fiberOf(s); f.ID != "" && f.CodeHash == hash {
		base.Status, base.Gate = adminv1.StatusMounted, adminv1.GateMount
		return base, true
	}
	return adminv1.Verdict{}, false
}

// knownVerdict returns the kernel's verdict on this exact submission when
// it was already made, so nothing is submitted twice.
func knownVerdict(p *smsv1.Plugin, s adminv1.PluginStatus, hash, id string) (adminv1.Verdict, bool) {
	if !submitted(p, id) {
		return adminv1.Verdict{}, false
	}
	if v, ok := observedVerdict(p, s, hash); ok {
		if v.Status == adminv1.StatusPending && p.Status.Verdict != nil {
			v.Reason = p.Status.Verdict.Message // the judge's own words, from the submission
		}
		return v, true
	}
	if v := p.Status.Verdict; v != nil && v.Result == smsv1.VerdictRejected {
		return adminv1.Verdict{PluginID: p.Spec.ID, Version: p.Spec.Version, CodeHash: hash,
			Status: adminv1.StatusRejected, Gate: v.Gate, Reason: v.Message}, true
	}
	return adminv1.Verdict{}, false
}

// live returns the Plugin as the API server has it, for knownVerdict to
// ask again before submitting. The cache may not hold the status the
// previous reconcile wrote yet (it arrives by watch), and a submission it
// does not show would be made twice; the status patch itself has already
// returned, so the live read shows it. Only the path about to submit pays
// for the read, and not for a Plugin created while this process leads
// whose status it has not patched yet (statusMemo.untouched): a new
// Plugin's first submission reads nothing more.
func (r *PluginReconciler) live(ctx context.Context, p *smsv1.Plugin) (*smsv1.Plugin, error) {
	var live smsv1.Plugin
	if err := r.reader().Get(ctx, client.ObjectKeyFromObject(p), &live); err != nil {
		return nil, err
	}
	return &live, nil
}

// toggle makes the fiber's enabled state follow spec.enabled.
func (r *PluginReconciler) toggle(ctx context.Context, kc *adminv1.Client, p *smsv1.Plugin, f adminv1.Fiber) (adminv1.Fiber, error) {
	want := p.Spec.Enabled == nil || *p.Spec.Enabled
	if f.ID == "" || f.Enabled == want || want && f.Quarantine != "" && !retryQuarantined(p) {
		return f, nil
	}
	if want {
		return kc.Enable(ctx, p.Spec.ID)
	}
	return kc.Disable(ctx, p.Spec.ID)
}

// retryQuarantined reports whether a person changed the Plugin's spec
// since its status last reported the kernel's quarantine: only then does
// spec.enabled enable a quarantined plugin again. Until then the
// quarantine wins, or the operator would start a crashing plugin again
// at every reconcile.
func retryQuarantined(p *smsv1.Plugin) bool {
	c := meta.FindStatusCondition(p.Status.Conditions, smsv1.ConditionQuarantined)
	return c != nil && c.ObservedGeneration < p.Generation
}

// fiberOf is the plugin's fiber, or the zero view when none is installed.
func fiberOf(s adminv1.PluginStatus) adminv1.Fiber {
	if s.Fiber == nil {
		return adminv1.Fiber{}
	}
	return *s.Fiber
}

// pendingFor returns the pending approval of plugin id's code hash, or nil.
func pendingFor(s adminv1.PluginStatus, id, hash string) *adminv1.Approval {
	for i := range s.Pending {
		if a := &s.Pending[i]; a.PluginID == id && a.CodeHash == hash {
			return a
		}
	}
	return nil
}
