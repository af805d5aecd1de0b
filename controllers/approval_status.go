package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// approvalState is what one reconcile found became of an Approval.
type approvalState int

const (
	// approvalUnchanged leaves the conditions as they were.
	approvalUnchanged approvalState = iota
	// approvalExpired: it can no longer apply (the code, the declaration
	// or the kernel's request moved on, or it is not its Plugin's).
	approvalExpired
	// approvalSelf: its decider requested the plugin under a tenant that
	// forbids self-approval; expired, and Denied says why.
	approvalSelf
	// approvalSuperseded: decided, and its plugin's code or declaration
	// has moved on since.
	approvalSuperseded
	// approvalWaiting: Ready=False while something else happens (the
	// tenant, the kernel's request, a TTL denial on its way).
	approvalWaiting
	// approvalAwaiting: waiting for a person's spec.decision.
	approvalAwaiting
	// approvalApproved and approvalDenied: the kernel has the decision.
	approvalApproved
	approvalDenied
	// approvalTimedOut: the TTL denied it, and the kernel has the denial.
	approvalTimedOut
)

// approvalObservation is what one reconcile of an Approval found. Its
// phases fill it; approvalStatus maps it to the status, once.
type approvalObservation struct {
	state       approvalState
	reason, msg string
	// by and at are who decided and when, for the decided states.
	by string
	at *metav1.Time
	// decisions, when set, are the approvals the kernel counted so far.
	decisions []smsv1.ApprovalDecision
}

// set records state with its reason and message.
func (o *approvalObservation) set(state approvalState, reason, msg string) {
	o.state, o.reason, o.msg = state, reason, msg
}

// approvalStatus is the status Approval a shows after a reconcile that
// observed o. It reads a and writes nothing.
func approvalStatus(a *smsv1.Approval, o *approvalObservation) smsv1.ApprovalStatus {
	s := *a.Status.DeepCopy()
	set := conditions{&s.Conditions, a.Generation}.set
	switch o.state {
	case approvalUnchanged: // the conditions stay as they were
	case approvalExpired, approvalSelf:
		set(smsv1.ConditionExpired, true, o.reason, o.msg)
		set(smsv1.ConditionApproved, false, o.reason, o.msg)
		set(smsv1.ConditionReady, false, o.reason, o.msg)
		if o.state == approvalSelf {
			set(smsv1.ConditionDenied, false, o.reason, o.msg)
		}
	case approvalSuperseded:
		set(smsv1.ConditionExpired, true, o.reason, o.msg)
	case approvalWaiting:
		set(smsv1.ConditionReady, false, o.reason, o.msg)
	case approvalAwaiting:
		set(smsv1.ConditionReady, false, o.reason, o.msg)
		set(smsv1.ConditionApproved, false, o.reason, o.msg)
		set(smsv1.ConditionDenied, false, o.reason, o.msg)
	case approvalApproved:
		set(smsv1.ConditionApproved, true, smsv1.ReasonApproved, "approved by "+o.by)
		set(smsv1.ConditionDenied, false, smsv1.ReasonApproved, "")
		set(smsv1.ConditionReady, true, smsv1.ReasonApproved, "the kernel mounted the approved code")
	case approvalDenied:
		set(smsv1.ConditionDenied, true, smsv1.ReasonDenied, "denied by "+o.by)
		set(smsv1.ConditionApproved, false, smsv1.ReasonDenied, "")
		set(smsv1.ConditionReady, true, smsv1.ReasonDenied, "the kernel dropped the denied code")
	case approvalTimedOut:
		set(smsv1.ConditionDenied, true, o.reason, o.msg)
		set(smsv1.ConditionApproved, false, o.reason, o.msg)
		set(smsv1.ConditionReady, true, o.reason, o.msg)
	}
	if o.state == approvalApproved || o.state == approvalDenied || o.state == approvalTimedOut {
		s.DecidedBy, s.DecidedAt = o.by, o.at
	}
	if o.decisions != nil {
		s.Decisions = o.decisions
	}
	s.ObservedGeneration = a.Generation
	return s
}
