package goja

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	js "github.com/dop251/goja"
)

// Starter is implemented by this package's units. StartCall begins what
// Call does without waiting for it: done receives the outcome exactly once,
// from the unit's goroutine or a timer's, and must not block. A caller that
// must not block, such as the isolated executor's child answering its
// parent, uses it instead of Call.
type Starter interface {
	StartCall(ctx context.Context, fn string, args json.RawMessage, done func(json.RawMessage, error))
}

var _ Starter = (*unit)(nil)

// job is one activation or call.
type job struct {
	ctx     context.Context
	what    string
	done    func(raw string, err error) // receives the outcome once
	once    sync.Once
	gone    atomic.Bool // finished, or abandoned: the loop drops it
	cleanup func()

	activation bool // its outcome is not a value to report

	// Loop goroutine only.
	started  bool        // its first slice ran
	promise  *js.Promise // the promise of its outcome, or nil
	value    js.Value    // its outcome, when not a promise
	inflight int         // host calls started on its behalf and not yet answered
}

type result struct {
	raw string
	err error
}

func newJob(ctx context.Context, what string) *job {
	return &job{ctx: ctx, what: what}
}

// finish reports the job's outcome, once.
func (j *job) finish(raw string, err error) {
	j.once.Do(func() {
		j.gone.Store(true)
		if j.cleanup != nil {
			j.cleanup()
		}
		j.done(raw, err)
	})
}

// wait starts j and waits for its outcome.
func (u *unit) wait(j *job, first func() error) (string, error) {
	res := make(chan result, 1)
	j.done = func(raw string, err error) { res <- result{raw: raw, err: err} }
	u.start(j, first)
	r := <-res
	return r.raw, r.err
}

// start posts j's first slice. The job then runs until its outcome is known,
// its deadline passes, its context ends or the unit closes; in the last
// three cases its JavaScript is interrupted if it is running. Host calls
// made on its behalf get its context, deadline included.
func (u *unit) start(j *job, first func() error) {
	if err := u.stoppedErr(); err != nil {
		j.finish("", fmt.Errorf("%s: %w", j.what, err))
		return
	}
	if j.ctx.Err() != nil {
		j.finish("", fmt.Errorf("%s: %w", j.what, context.Cause(j.ctx)))
		return
	}
	ctx, cancel := context.WithTimeoutCause(j.ctx, u.opts.Deadline, u.deadlineErr)
	j.ctx = ctx
	stop := context.AfterFunc(ctx, func() { u.abandon(j, fmt.Errorf("%s: %w", j.what, context.Cause(ctx))) })
	j.cleanup = func() {
		stop()
		cancel()
		u.mu.Lock()
		delete(u.active, j)
		u.mu.Unlock()
	}
	u.mu.Lock()
	closed := u.closed
	if !closed {
		u.active[j] = struct{}{}
		u.queue = append(u.queue, func() { u.slice(j, first) })
		select {
		case u.wake <- struct{}{}:
		default:
		}
	}
	u.mu.Unlock()
	if closed {
		j.finish("", fmt.Errorf("%s: %w", j.what, ErrClosed))
	}
}

// abandon ends a job that ran out of time or whose context ended.
func (u *unit) abandon(j *job, err error) {
	j.gone.Store(true)
	u.interrupt(j, err)
	j.finish("", err)
}
