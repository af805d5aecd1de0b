package controllers

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// A reconcile's error says, by its type, what the object's status shows
// and how the reconcile is retried (outcome):
//
//   - *terminalError: nothing changes until the spec does. Stalled.
//   - *waitError (and anything wrapping errWait): the object waits on
//     something that wakes it by watch. Reconciling; requeued after the
//     poll interval as a safety net, with no error.
//   - *retryError: a call failed that may succeed again. Reconciling;
//     returned to controller-runtime, which retries with backoff.
//   - any other error: a failure the conditions do not describe (an API
//     read, say); they stay as they were, and it is retried with backoff.

// errWait means the object waits on something else (its tenant, its
// code, a decision on its way); its conditions say what.
var errWait = errors.New("waiting")

// terminalError is an outcome that only a change of the spec changes:
// an invalid spec, or a verdict the status records (a rejection, a
// denial, an activation that failed). A verdict is no failure of the
// reconcile and is not returned to controller-runtime; an invalid spec
// is, as a reconcile.TerminalError.
type terminalError struct {
	reason  string
	err     error
	verdict bool
}

func (e *terminalError) Error() string { return e.err.Error() }
func (e *terminalError) Unwrap() error { return e.err }

// invalidSpec is the terminal error of a spec the operator cannot act on.
func invalidSpec(err error) error {
	return &terminalError{reason: smsv1.ReasonInvalidSpec, err: err}
}

// stalledBy is the terminal error of a verdict the status records.
func stalledBy(reason, msg string) error {
	return &terminalError{reason: reason, err: errors.New(msg), verdict: true}
}

// waitError is a wait on something that wakes the object by watch (or,
// with after set, a retry after that long): Reconciling with reason.
type waitError struct {
	reason, msg string
	after       time.Duration
}

func (e *waitError) Error() string        { return e.msg }
func (e *waitError) Is(target error) bool { return target == errWait }

// waitFor is a wait with reason and msg, requeued after the poll interval.
func waitFor(reason, msg string) error { return &waitError{reason: reason, msg: msg} }

// retryError is a failed call that is retried with backoff: Reconciling
// with reason, the call's error as the message.
type retryError struct {
	reason string
	err    error
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

// readinessOf is what err says of Ready (reason and message), and
// whether it says anything: only the classified errors do.
func readinessOf(err error) (readiness, bool) {
	var (
		term  *terminalError
		wait  *waitError
		retry *retryError
	)
	switch {
	case errors.As(err, &term):
		return readiness{reason: term.reason, msg: term.err.Error()}, true
	case errors.As(err, &wait) && wait.reason != "":
		return readiness{reason: wait.reason, msg: wait.msg}, true
	case errors.As(err, &retry):
		return readiness{reason: retry.reason, msg: retry.err.Error()}, true
	}
	return readiness{}, false
}

// observed reports whether a reconcile that ended with err saw the
// generation through (a success, a wait, a terminal outcome), so that
// status.observedGeneration may move to it.
func observed(err error) bool {
	var term *terminalError
	return err == nil || errors.Is(err, errWait) || errors.As(err, &term)
}

// outcome is what a reconcile that ended with res and err returns to
// controller-runtime.
func outcome(res ctrl.Result, err error, poll time.Duration) (ctrl.Result, error) {
	var (
		term *terminalError
		wait *waitError
	)
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &term):
		if term.verdict {
			return res, nil
		}
		return ctrl.Result{}, reconcile.TerminalError(err)
	case errors.As(err, &wait) && wait.after > 0:
		return ctrl.Result{RequeueAfter: wait.after}, nil
	case errors.Is(err, errWait):
		// What it waits for wakes it by watch; the requeue is a safety
		// net, not the way it learns.
		return ctrl.Result{RequeueAfter: poll}, nil
	}
	return ctrl.Result{}, err
}

// readiness is what the Ready condition says.
type readiness struct {
	ok bool
	// paused: Ready is False and nothing is in progress (a suspended
	// tenant): neither Reconciling nor Stalled.
	paused      bool
	reason, msg string
}

// conditions are one object's conditions, set as observed at one
// generation.
type conditions struct {
	list *[]metav1.Condition
	gen  int64
}

// set sets condition typ.
func (c conditions) set(typ string, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(c.list, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: msg, ObservedGeneration: c.gen})
}

// setProgress sets Ready from r and kstatus's Reconciling and Stalled
// from Ready and err, with Ready's reason: Ready (or paused) is neither;
// a terminalError is Stalled, whatever its reason; anything else is
// Reconciling, retried until it resolves.
func setProgress(c conditions, r readiness, err error) {
	ready, reconciling, stalled := smsv1.ConditionReady, smsv1.ConditionReconciling, smsv1.ConditionStalled
	c.set(ready, r.ok, r.reason, r.msg)
	var term *terminalError
	switch {
	case r.ok || r.paused:
		c.set(reconciling, false, r.reason, "")
		c.set(stalled, false, r.reason, "")
	case errors.As(err, &term):
		c.set(reconciling, false, r.reason, "")
		c.set(stalled, true, r.reason, r.msg)
	default:
		c.set(reconciling, true, r.reason, r.msg)
		c.set(stalled, false, r.reason, "")
	}
}
