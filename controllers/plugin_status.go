package controllers

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// pluginObservation is what one reconcile of a Plugin found. Its phases
// fill it and write nothing else; pluginStatus maps it and the
// reconcile's error to the status, once.
type pluginObservation struct {
	// hash and id are the code hash and the submission id of the spec's
	// submission; "" until it was built.
	hash, id string
	// fiber is what the kernel runs of the plugin.
	fiber adminv1.Fiber
	// verdict is the kernel's verdict on the submission, recorded as the
	// spec's; nil when none was reached (or one given for want of
	// capacity, which is not recorded).
	verdict *adminv1.Verdict
	// denial is the Approval that denied the submission's code, or nil.
	denial *smsv1.Approval
	// approved: an Approval of the code approved it.
	approved bool
	// approval names the Approval answering the kernel's pending request.
	approval *corev1.LocalObjectReference
	// lastEdit is a person's edit of an agent-made spec, pushed to the
	// kernel in this reconcile.
	lastEdit *smsv1.Edit
	// judged: the reconcile reached the kernel's answer and acted on it;
	// the conditions follow verdict and fiber.
	judged bool
}

// pluginStatus is the status Plugin p shows after a reconcile that
// observed o and ended with err. It reads p (spec, generation, the status
// before) and writes nothing: the Plugin reconciler patches what it
// returns. Conditions a reconcile did not get far enough to judge keep
// what they said.
func pluginStatus(p *smsv1.Plugin, o *pluginObservation, err error) smsv1.PluginStatus {
	s := *p.Status.DeepCopy()
	gen := p.Generation
	if o.lastEdit != nil {
		s.LastEdit = o.lastEdit
	}
	if v := o.verdict; v != nil {
		s.CodeHash, s.Submission, s.SubmittedGeneration = o.hash, o.id, gen
		s.Verdict = &smsv1.Verdict{Result: smsv1.VerdictResult(v.Status), Gate: v.Gate, Message: v.Reason}
	}
	r, ok := readinessOf(err)
	switch {
	case o.denial != nil:
		r, ok = deniedConditions(&s, gen, o), true
	case o.judged && o.verdict != nil:
		r, ok = verdictConditions(&s, gen, o, specEnabled(p)), true
	case ok:
		var term *terminalError
		if errors.As(err, &term) || meta.FindStatusCondition(s.Conditions, smsv1.ConditionJudged) == nil {
			// A wait leaves the last verdict's Judged; an invalid spec is judged.
			conditions{&s.Conditions, gen}.set(smsv1.ConditionJudged, false, r.reason, r.msg)
		}
	}
	if ok {
		setProgress(conditions{&s.Conditions, gen}, r, err)
	}
	if o.fiber.ID != "" {
		quarantineCondition(conditions{&s.Conditions, gen}, o.fiber)
		s.Capabilities = o.fiber.Capabilities
	}
	s.Origin = smsv1.OriginGit
	if p.Labels[smsv1.LabelOrigin] == string(smsv1.OriginAgent) {
		s.Origin = smsv1.OriginAgent
	}
	if observed(err) {
		s.ObservedGeneration = gen
	}
	return s
}

// verdictOutcome is the error a reconcile that observed o ends with: a
// terminalError when only a new spec changes the outcome (a denial, a
// rejection, a mounted verdict whose activation failed), else nil.
func verdictOutcome(o *pluginObservation) error {
	if a := o.denial; a != nil {
		return stalledBy(smsv1.ReasonDenied, denialMessage(a))
	}
	v, f := o.verdict, o.fiber
	switch {
	case v == nil:
		return nil
	case v.Status == adminv1.StatusRejected:
		return stalledBy(rejection(*v))
	case v.Status == adminv1.StatusMounted && f.ID == "":
		return stalledBy(smsv1.ReasonFailed, "not installed in the kernel")
	case f.Quarantine != "" && !f.Enabled:
		return stalledBy(smsv1.ReasonQuarantined, f.Quarantine)
	case v.Status == adminv1.StatusMounted && f.Enabled && f.State == adminv1.StateFailed:
		return stalledBy(smsv1.ReasonFailed, f.Error)
	}
	return nil
}

// verdictConditions sets Judged, Approved, Mounted and the approval
// reference from the verdict and the fiber, and returns Ready.
func verdictConditions(s *smsv1.PluginStatus, gen int64, o *pluginObservation, enabled bool) readiness {
	v, c := *o.verdict, conditions{&s.Conditions, gen}
	switch v.Status {
	case adminv1.StatusMounted:
		c.set(smsv1.ConditionJudged, true, smsv1.ReasonMounted, "the judge mounted version "+v.Version)
		if o.approved {
			c.set(smsv1.ConditionApproved, true, smsv1.ReasonApproved, "approved by a human")
		} else {
			c.set(smsv1.ConditionApproved, true, smsv1.ReasonNotRequired, "no sensitive scope or point")
		}
	case adminv1.StatusPending:
		c.set(smsv1.ConditionJudged, true, smsv1.ReasonPendingApproval, v.Reason)
		c.set(smsv1.ConditionApproved, false, smsv1.ReasonPendingApproval, v.Reason)
	default:
		reason, msg := rejection(v)
		c.set(smsv1.ConditionJudged, false, reason, msg)
		c.set(smsv1.ConditionApproved, false, reason, msg)
	}
	switch {
	case v.Status != adminv1.StatusPending:
		s.ApprovalRef = nil
	case o.approval != nil:
		s.ApprovalRef = o.approval
	}
	return mountedConditions(c, v, o.fiber, fiberWant{codeHash: s.CodeHash, enabled: enabled})
}

// deniedConditions reports a submission whose code a human (or the TTL)
// denied, and returns Ready: the denial, whatever the fiber.
func deniedConditions(s *smsv1.PluginStatus, gen int64, o *pluginObservation) readiness {
	msg := denialMessage(o.denial)
	s.CodeHash = o.hash
	s.Verdict = &smsv1.Verdict{Result: smsv1.VerdictRejected, Gate: adminv1.GateApproval, Message: msg}
	s.ApprovalRef = nil
	c := conditions{&s.Conditions, gen}
	c.set(smsv1.ConditionJudged, true, smsv1.ReasonPendingApproval, "the policy asked for a human's approval")
	c.set(smsv1.ConditionApproved, false, smsv1.ReasonDenied, msg)
	mountedConditions(c, adminv1.Verdict{Status: adminv1.StatusRejected, Gate: adminv1.GateApproval}, o.fiber, fiberWant{codeHash: s.CodeHash})
	return readiness{reason: smsv1.ReasonDenied, msg: msg}
}

// denialMessage says who or what denied Approval a.
func denialMessage(a *smsv1.Approval) string {
	if c := meta.FindStatusCondition(a.Status.Conditions, smsv1.ConditionDenied); c != nil && c.Message != "" {
		return c.Message
	}
	return "approval " + a.Name + " denied"
}

// fiberWant is what the Plugin asks of its fiber: the code hash of its
// submission, and spec.enabled.
type fiberWant struct {
	codeHash string
	enabled  bool
}

// mountedConditions sets Mounted from the fiber (an older version may
// keep serving while new code waits or was refused) and returns Ready.
func mountedConditions(c conditions, v adminv1.Verdict, f adminv1.Fiber, want fiberWant) readiness {
	current := f.ID != "" && f.CodeHash == want.codeHash
	switch {
	case f.ID == "":
		c.set(smsv1.ConditionMounted, false, notMountedReason(v), "not installed in the kernel")
	case f.Quarantine != "" && !f.Enabled:
		c.set(smsv1.ConditionMounted, false, smsv1.ReasonQuarantined, f.Quarantine)
	case f.SafeMode && f.Enabled:
		c.set(smsv1.ConditionMounted, false, smsv1.ReasonSafeMode, "the kernel runs in safe mode: it activates no agent plugin until the Tenant's spec.safeMode is off")
	case !f.Enabled:
		c.set(smsv1.ConditionMounted, false, smsv1.ReasonDisabled, "installed and disabled")
	case f.State == adminv1.StateFailed:
		c.set(smsv1.ConditionMounted, false, smsv1.ReasonFailed, f.Error)
	case f.State != adminv1.StateActive:
		c.set(smsv1.ConditionMounted, false, smsv1.ReasonDependencyMissing, "the plugin is "+string(f.State)+": a dependency is missing")
	case current:
		c.set(smsv1.ConditionMounted, true, smsv1.ReasonMounted, "version "+f.Version+" is active")
	default:
		c.set(smsv1.ConditionMounted, true, smsv1.ReasonMounted, fmt.Sprintf("version %s (%s) keeps serving until the new code mounts", f.Version, shortHash(f.CodeHash)))
	}
	switch {
	case current && !want.enabled && !f.Enabled:
		return readiness{ok: true, reason: smsv1.ReasonDisabled, msg: "installed and disabled, as the spec says"}
	case current && f.Enabled && f.State == adminv1.StateActive:
		return readiness{ok: true, reason: smsv1.ReasonMounted, msg: "version " + f.Version + " is active"}
	}
	from := meta.FindStatusCondition(*c.list, smsv1.ConditionMounted)
	if v.Status != adminv1.StatusMounted {
		from = meta.FindStatusCondition(*c.list, smsv1.ConditionApproved)
	}
	return readiness{reason: from.Reason, msg: from.Message}
}

// quarantineCondition sets Quarantined while the kernel holds f in
// quarantine, and removes it otherwise. Its observedGeneration stays the
// generation that first reported it, which retryQuarantined compares the
// spec's with: a reconcile that fails before it could act on a person's
// edit must not make the edit look older than the quarantine.
func quarantineCondition(c conditions, f adminv1.Fiber) {
	if f.Quarantine != "" && !f.Enabled {
		if old := meta.FindStatusCondition(*c.list, smsv1.ConditionQuarantined); old != nil && old.Status == metav1.ConditionTrue {
			old.Message = f.Quarantine
			return
		}
		c.set(smsv1.ConditionQuarantined, true, smsv1.ReasonQuarantined, f.Quarantine)
		return
	}
	meta.RemoveStatusCondition(c.list, smsv1.ConditionQuarantined)
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
