package goja

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	js "github.com/dop251/goja"

	"github.com/sms-baseline/sms/kernel"
)

var errAbandoned = errors.New("the caller stopped waiting")

// A slice is one uninterrupted run of JavaScript on the loop: a job's start,
// or the answer to a host call and the promise reactions it triggers. Each
// slice runs on behalf of one job, which its deadline and its host calls are
// charged to.

// slice runs fn for j, fails j if fn ended with an error the script could not
// catch, then reports every job whose promise settled.
func (u *unit) slice(j *job, fn func() error) {
	if err := u.run(j, fn); err != nil {
		jerr := u.jsError(j, err)
		if uncatchable(err) {
			jerr = u.stop(j, jerr)
		}
		j.finish("", jerr)
		delete(u.jobs, j)
		u.forget(j)
	}
	u.settle()
}

// uncatchable reports whether err ended JavaScript in a way no script can
// catch: an interrupt or a stack overflow.
func uncatchable(err error) bool {
	var interrupted *js.InterruptedError
	var overflow *js.StackOverflowError
	return errors.As(err, &interrupted) || errors.As(err, &overflow)
}

// stop ends the unit after an uncatchable error that ended j's slice, and
// returns the cause marked as a stop (stoppedBy). goja leaves a runtime
// whose async function was interrupted unable to run promise jobs again,
// so the runtime is never used after one: every pending and later call
// fails with the cause, until the kernel starts the plugin again.
func (u *unit) stop(j *job, cause error) error {
	cause = stoppedBy(j, cause)
	u.mu.Lock()
	if u.stopped == nil {
		u.stopped = stoppedBy(j, fmt.Errorf("%s was stopped after %w; the kernel starts it again", u.plugin, cause))
	}
	stopped := u.stopped
	u.mu.Unlock()
	for other := range u.jobs {
		other.finish("", stopped)
		delete(u.jobs, other)
		u.forget(other)
	}
	return cause
}

// stoppedBy marks the error of a unit stopped while it ran j: as
// kernel.ErrUnitStopped, which the kernel restarts the plugin on and counts
// against it, or, when j's caller caused the stop (its context ended:
// abandon), as kernel.StoppedByCaller, which it does not count.
func stoppedBy(j *job, err error) error {
	if j != nil && j.byCaller.Load() {
		return kernel.StoppedByCaller(err)
	}
	return kernel.Stopped(err)
}

// run runs fn with the deadline guard armed and the slice charged to j.
func (u *unit) run(j *job, fn func() error) error {
	if err := u.stoppedErr(); err != nil {
		return err
	}
	u.sliceMu.Lock()
	if !j.started && j.gone.Load() {
		// The caller gave up before the job started: never start it. The
		// check is under sliceMu, like the caller's interrupt, so either
		// the job does not start or the caller sees it running.
		u.sliceMu.Unlock()
		return errAbandoned
	}
	u.sliceSeq++
	u.running = j
	u.sliceEnd = time.Now().Add(u.opts.Deadline)
	u.sliceMu.Unlock()
	u.guard.Reset(u.opts.Deadline)
	err := fn()
	u.sliceMu.Lock()
	u.running = nil
	if uncatchable(err) {
		u.halted = j // before the slice's end shows: see interrupt
	}
	u.rt.ClearInterrupt() // an interrupt that arrived as the slice ended must not hit the next one
	u.sliceMu.Unlock()
	return err
}

// onGuard runs when the slice guard fires: a timer shared by the unit's
// slices and reset by each. A fire meant for an earlier slice finds the
// running slice's end still ahead and does nothing.
func (u *unit) onGuard() {
	u.sliceMu.Lock()
	seq, expired := u.sliceSeq, u.running != nil && !time.Now().Before(u.sliceEnd)
	u.sliceMu.Unlock()
	if expired {
		u.expire(seq, u.deadlineErr)
	}
}

// expire interrupts slice seq if it is still running, and reports it as
// stuck if it still runs a grace period later (inside a built-in, which
// goja cannot interrupt).
func (u *unit) expire(seq uint64, reason error) {
	u.sliceMu.Lock()
	running := u.running != nil && u.sliceSeq == seq
	if running {
		u.rt.Interrupt(reason)
	}
	u.sliceMu.Unlock()
	if !running {
		return
	}
	time.AfterFunc(u.opts.Grace, func() {
		u.sliceMu.Lock()
		stuck := u.running != nil && u.sliceSeq == seq
		u.sliceMu.Unlock()
		if stuck {
			u.opts.OnStuck(u.plugin)
		}
	})
}

// interrupt stops j's JavaScript if it is running now. It reports whether
// the unit stops for j: it was running, or an uncatchable error just ended
// its slice (the guard's interrupt may end it first).
func (u *unit) interrupt(j *job, reason error) bool {
	u.sliceMu.Lock()
	seq, running, halted := u.sliceSeq, u.running == j, u.halted == j
	u.sliceMu.Unlock()
	if running {
		u.expire(seq, reason)
	}
	return running || halted
}

// jsError turns an error a slice ended with into the job's error.
func (u *unit) jsError(j *job, err error) error {
	var ex *js.Exception
	if errors.As(err, &ex) && !uncatchable(err) {
		return fmt.Errorf("%s: %s", j.what, u.describe(j, ex.Value()))
	}
	var interrupted *js.InterruptedError
	if errors.As(err, &interrupted) {
		if cause, ok := interrupted.Value().(error); ok {
			return fmt.Errorf("%s: %w", j.what, cause)
		}
	}
	var overflow *js.StackOverflowError
	if errors.As(err, &overflow) {
		return fmt.Errorf("%s: JavaScript exceeded the maximum call stack size of %d", j.what, u.opts.MaxCallStackSize)
	}
	return fmt.Errorf("%s: %w", j.what, err)
}

// track records what a job's start returned: its outcome, or a promise of
// it. Another thenable is adopted through a promise, as await would.
func (u *unit) track(j *job, v js.Value) error {
	j.started = true
	u.jobs[j] = struct{}{}
	if p, ok := v.Export().(*js.Promise); ok {
		j.promise = p
		return nil
	}
	if obj, ok := v.(*js.Object); ok {
		if _, thenable := js.AssertFunction(obj.Get("then")); thenable {
			p, resolve, _ := u.rt.NewPromise()
			j.promise = p
			return resolve(v)
		}
	}
	j.value = v
	return nil
}

// settle finishes every job whose outcome is known and whose host calls
// were all answered.
func (u *unit) settle() {
	for j := range u.jobs {
		if !j.gone.Load() {
			if j.inflight > 0 || j.promise != nil && j.promise.State() == js.PromiseStatePending {
				continue
			}
			u.complete(j)
		}
		delete(u.jobs, j)
		u.forget(j)
	}
}

// complete reports a job whose outcome is known: an error, or the outcome
// encoded (an activation's outcome is not reported).
func (u *unit) complete(j *job) {
	if j.promise != nil {
		delete(u.unhandled, j.promise) // the job's own outcome was handled: by the host
	}
	if reason, ok := u.firstUnhandled(j); ok {
		j.finish("", fmt.Errorf("%s: a promise nobody awaited was rejected: %s", j.what, u.describe(j, reason)))
		return
	}
	v := j.value
	if j.promise != nil {
		v = j.promise.Result()
		if j.promise.State() == js.PromiseStateRejected {
			j.finish("", fmt.Errorf("%s: %s", j.what, u.describe(j, v)))
			return
		}
	}
	if j.activation {
		j.finish("null", nil)
		return
	}
	var raw json.RawMessage
	err := u.run(j, func() error {
		var err error
		raw, err = u.encodeGuarded(v)
		return err
	})
	if err != nil {
		jerr := u.jsError(j, err)
		if uncatchable(err) {
			jerr = u.stop(j, jerr)
		}
		j.finish("", jerr)
		return
	}
	j.finish(string(raw), nil)
}

func (u *unit) trackRejection(p *js.Promise, op js.PromiseRejectionOperation) {
	if op == js.PromiseRejectionHandle {
		delete(u.unhandled, p)
		return
	}
	if u.running != nil {
		u.unhandled[p] = rejected{owner: u.running, reason: p.Result()}
	}
}

func (u *unit) firstUnhandled(j *job) (js.Value, bool) {
	for _, r := range u.unhandled {
		if r.owner == j {
			return r.reason, true
		}
	}
	return nil, false
}

func (u *unit) forget(j *job) {
	for p, r := range u.unhandled {
		if r.owner == j {
			delete(u.unhandled, p)
		}
	}
}

// describe renders a thrown value with the bridge's describe, which may run
// agent code (a getter on the error), so it runs guarded like any slice.
func (u *unit) describe(j *job, v js.Value) string {
	var out string
	err := u.run(j, func() error {
		s, err := u.h.describe(js.Undefined(), v)
		if err == nil {
			out = s.String()
		}
		return err
	})
	if err != nil {
		return "a value that cannot be printed"
	}
	return out
}
