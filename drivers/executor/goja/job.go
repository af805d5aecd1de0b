package goja

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	js "github.com/dop251/goja"

	"github.com/sms-baseline/sms/drivers/executor/internal/workers"
	"github.com/sms-baseline/sms/kernel"
)

// Starter is implemented by this package's units. StartActivate and
// StartCall begin what Activate and Call do without waiting for them: done
// receives the outcome exactly once, from the goroutine driving the unit or
// a timer's, and must not block. Drive runs the unit's queued JavaScript on
// the calling goroutine until none is left (or another goroutine is
// driving). A caller that must not block, such as the isolated executor's
// child answering its parent, uses them instead of Activate and Call.
type Starter interface {
	StartActivate(ctx context.Context, host kernel.HostBridge, done func(error))
	StartCall(ctx context.Context, fn string, args json.RawMessage, done func(json.RawMessage, error))
	Drive()
}

var _ Starter = (*unit)(nil)

// job is one activation or call.
type job struct {
	ctx      context.Context // the caller's
	deadline time.Time       // set when the job starts
	what     string
	done     func(raw string, err error) // receives the outcome once, unless res does
	res      chan result                 // receives the outcome of a job its caller waits for
	ended    atomic.Bool                 // the outcome was reported
	gone     atomic.Bool                 // finished, or abandoned: the loop drops it
	byCaller atomic.Bool                 // abandoned because its caller's context ended

	// Set by start under the unit's mu; released by finish.
	unit    atomic.Pointer[unit]
	timer   *time.Timer // the deadline
	stopCtx func() bool // stops the callback on the caller's context

	// hostCtx is ctx with the job's deadline, made for its first host call
	// (most jobs make none); hostMu guards it against finish.
	hostMu     sync.Mutex
	hostCtx    context.Context
	hostCancel context.CancelFunc

	activation bool // its outcome is not a value to report

	// A job whose caller waits for it (Activate, Call) has a kick channel:
	// host calls made on its behalf are left in tasks for that caller to
	// make, one at a time, and kick wakes it. Guarded by the unit's mu.
	kick       chan struct{}
	tasks      []*hostCallState
	inline     bool // the caller is making one of the job's host calls
	callerGone bool // the caller stopped waiting: host calls go to workers

	// Loop goroutine only.
	started  bool        // its first slice ran
	promise  *js.Promise // the promise of its outcome, or nil
	value    js.Value    // its outcome, when not a promise
	inflight int         // host calls started on its behalf and not yet answered
	calls    int         // host calls started on its behalf in all
	bytes    int64       // bytes its host calls sent and received
}

type result struct {
	raw string
	err error
}

func newJob(ctx context.Context, what string) *job {
	return &job{ctx: ctx, what: what}
}

// kind names what the job is, for messages: "activation" or "call".
func (j *job) kind() string {
	if j.activation {
		return "activation"
	}
	return "call"
}

// finish reports the job's outcome, once.
func (j *job) finish(raw string, err error) {
	if !j.ended.CompareAndSwap(false, true) {
		return
	}
	j.gone.Store(true)
	j.release()
	if j.res != nil {
		j.res <- result{raw: raw, err: err}
		return
	}
	j.done(raw, err)
}

// release stops what start set up for the job, if it did.
func (j *job) release() {
	j.endHostContext()
	u := j.unit.Load()
	if u == nil {
		return
	}
	u.mu.Lock()
	timer, stop := j.timer, j.stopCtx
	delete(u.active, j)
	u.mu.Unlock()
	timer.Stop()
	if stop != nil {
		stop()
	}
}

// wait starts j and waits for its outcome, making the job's host calls
// while it waits. Inline, the caller also drives the loop itself, so an
// uncontended call runs on its goroutine; otherwise the unit's own loop
// goroutine runs the JavaScript, and the caller is free to return at the
// deadline even if the JavaScript is stuck in a built-in no interrupt can
// stop (activations run so: their callers hold the kernel's locks).
func (u *unit) wait(j *job, first func() error, inline bool) (string, error) {
	res := make(chan result, 1)
	j.res = res
	j.kick = make(chan struct{}, 1)
	inline = inline || u.opts.Driven // nobody else would drive
	u.start(j, first, !inline)
	wake := u.wake
	if inline {
		u.drive(j)
	} else {
		wake = nil // the loop goroutine answers wake-ups
	}
	for {
		if c := u.takeTask(j); c != nil {
			raw, err := hostCall(c.ctx, c.host, c.req)
			u.enqueue(u.answerSlice(c, raw, err), !inline)
			u.endTask(j)
			if inline {
				u.drive(j)
			}
			continue
		}
		select {
		case r := <-res:
			u.leave(j)
			return r.raw, r.err
		case <-wake:
			u.drive(j)
		case <-j.kick:
		}
	}
}

// offer leaves a host call of j for j's waiting caller to make, and
// reports false when the caller cannot take it now (it is making another
// one, or is gone), so that the call goes to a worker instead.
func (u *unit) offer(c *hostCallState) bool {
	j := c.j
	if j.kick == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if j.inline || j.callerGone {
		return false
	}
	j.tasks = append(j.tasks, c)
	select {
	case j.kick <- struct{}{}:
	default:
	}
	return true
}

// takeTask returns a host call for j's caller to make now, handing any
// other pending one to a worker: host calls that wait on each other must
// not wait in line.
func (u *unit) takeTask(j *job) *hostCallState {
	u.mu.Lock()
	tasks := j.tasks
	j.tasks = nil
	if len(tasks) > 0 {
		j.inline = true
	}
	u.mu.Unlock()
	if len(tasks) == 0 {
		return nil
	}
	for _, c := range tasks[1:] {
		workers.Go(func() { u.perform(c) })
	}
	return tasks[0]
}

// endTask records that j's caller finished the host call it was making.
func (u *unit) endTask(j *job) {
	u.mu.Lock()
	j.inline = false
	u.mu.Unlock()
}

// leave records that j's caller stopped waiting; host calls still left
// for it go to workers.
func (u *unit) leave(j *job) {
	u.mu.Lock()
	j.callerGone = true
	tasks := j.tasks
	j.tasks = nil
	u.mu.Unlock()
	for _, c := range tasks {
		workers.Go(func() { u.perform(c) })
	}
}

// start posts j's first slice, waking a driver if wake is set (otherwise
// the caller drives next). The job then runs until its outcome is known,
// its deadline passes, its context ends or the unit closes; in the last
// three cases its JavaScript is interrupted if it is running. Host calls
// made on its behalf get its context, deadline included.
func (u *unit) start(j *job, first func() error, wake bool) {
	if err := u.stoppedErr(); err != nil {
		j.finish("", fmt.Errorf("%s: %w", j.what, err))
		return
	}
	if j.ctx.Err() != nil {
		j.finish("", fmt.Errorf("%s: %w", j.what, context.Cause(j.ctx)))
		return
	}
	u.mu.Lock()
	// One timer for the deadline, and a callback on the caller's context
	// only if it can end: no context is derived until a host call needs one.
	// Set under u.mu, which release takes before reading them.
	j.unit.Store(u)
	j.deadline = time.Now().Add(u.opts.Deadline)
	j.timer = time.AfterFunc(u.opts.Deadline, func() { u.overran(j) })
	if j.ctx.Done() != nil {
		j.stopCtx = context.AfterFunc(j.ctx, func() { u.abandon(j, fmt.Errorf("%s: %w", j.what, context.Cause(j.ctx))) })
	}
	closed := u.closed
	if !closed {
		u.active[j] = struct{}{}
		u.queue = append(u.queue, func() { u.slice(j, first) })
		if wake && !u.driving {
			u.signal()
		}
	}
	u.mu.Unlock()
	if closed {
		j.finish("", fmt.Errorf("%s: %w", j.what, ErrClosed))
	}
}

// abandon ends a job whose context ended. Interrupting its JavaScript
// stops the unit, which its caller caused: the error says so.
func (u *unit) abandon(j *job, err error) {
	j.byCaller.Store(true)
	j.gone.Store(true)
	if u.interrupt(j, err) {
		err = stoppedBy(j, err)
	}
	j.finish("", err)
}

// overran ends a job that ran out of time. Interrupting its JavaScript
// stops the unit, so then the job's error says so.
func (u *unit) overran(j *job) {
	err := fmt.Errorf("%s: %w", j.what, u.deadlineErr)
	j.gone.Store(true)
	if u.interrupt(j, err) {
		err = stoppedBy(j, err)
	}
	j.finish("", err)
}

// hostContext returns the context host calls made on j's behalf get: the
// caller's, with the job's deadline.
func (j *job) hostContext(cause error) context.Context {
	j.hostMu.Lock()
	defer j.hostMu.Unlock()
	if j.hostCtx == nil {
		j.hostCtx, j.hostCancel = context.WithDeadlineCause(j.ctx, j.deadline, cause)
		if j.gone.Load() {
			j.hostCancel()
		}
	}
	return j.hostCtx
}

func (j *job) endHostContext() {
	j.hostMu.Lock()
	defer j.hostMu.Unlock()
	if j.hostCancel != nil {
		j.hostCancel()
	}
}
