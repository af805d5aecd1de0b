package controllers

import (
	"errors"
	"fmt"
	"net/http"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// gateKernel names, in a Plugin's verdict, the kernel's admin API itself
// refusing a submission (a 4xx) before the judge saw it. It is no gate of
// the judge's; its condition reason is smsv1.ReasonKernelRefused.
const gateKernel = "kernel"

// refusedVerdict is the verdict recorded for a submission the kernel
// refused with err, so that the same spec is not submitted again.
func refusedVerdict(p *smsv1.Plugin, hash string, err error) adminv1.Verdict {
	msg := err.Error()
	var e *adminv1.Error
	if errors.As(err, &e) {
		msg = fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
	}
	return adminv1.Verdict{Status: adminv1.StatusRejected, PluginID: p.Spec.ID, Version: p.Spec.Version, CodeHash: hash,
		Gate: gateKernel, Reason: msg}
}

// rejection is the condition reason and message of a rejected verdict.
func rejection(v adminv1.Verdict) (reason, msg string) {
	if v.Gate == gateKernel {
		return smsv1.ReasonKernelRefused, "the kernel refused the submission: " + v.Reason
	}
	return smsv1.GateReason(v.Gate), fmt.Sprintf("rejected by the %s gate: %s", v.Gate, v.Reason)
}

// verdictMessage says in a line what a verdict means, for status.lastEdit.
func verdictMessage(v adminv1.Verdict) string {
	switch v.Status {
	case adminv1.StatusMounted:
		return "the judge mounted version " + v.Version
	case adminv1.StatusPending:
		return v.Reason
	}
	_, msg := rejection(v)
	return msg
}

// busy is the wait of a verdict the judge gave for want of capacity
// (Retry): it is not recorded as the submission's verdict, so the same
// spec is submitted again when the requeue after the poll interval comes
// round, and the plugin is Reconciling meanwhile.
func busy(v adminv1.Verdict) error {
	return waitFor(smsv1.ReasonBusy, fmt.Sprintf("the %s gate has no room now and the operator submits it again: %s", v.Gate, v.Reason))
}
