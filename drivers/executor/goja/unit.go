package goja

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	js "github.com/dop251/goja"

	"github.com/sms-baseline/sms/kernel"
)

// unit is one loaded agent plugin: a goja runtime driven by one goroutine
// at a time. Work for the runtime is posted to a queue; whoever drives the
// loop runs it. Activate and Call post their job and drive the loop
// themselves while they wait, so an uncontended call runs on its caller's
// goroutine; the unit's own loop goroutine drives when nobody else does
// (StartCall, and answers arriving while no caller waits). Host calls made
// by JavaScript are started by an AsyncHost, made by the waiting caller of
// the job they serve while it is not driving, or made on worker goroutines;
// the loop is never held during a host call, so a host call that calls back
// into this unit (a re-entrant Call) is served meanwhile.
type unit struct {
	plugin      string
	prg         *js.Program
	opts        Options
	deadlineErr error

	// Owned by the goroutine driving the loop.
	rt        *js.Runtime
	h         harness
	jobs      map[*job]struct{}        // jobs whose outcome has not been reported
	unhandled map[*js.Promise]rejected // rejected promises nobody handled yet
	fns       map[string]*js.Object    // functions handed to the host, by id
	hostLive  int                      // host calls started and not yet answered, all jobs
	hostQueue []*hostCallState         // host calls waiting for hostLive to drop
	fnIDs     map[*js.Object]string
	encodeFn  js.Callable // runs encodeIn inside JavaScript, where getters may throw
	encodeIn  js.Value
	encodeOut json.RawMessage
	encodeErr error

	mu      sync.Mutex // guards the fields below
	queue   []func()
	driving bool              // a goroutine is running the queue
	active  map[*job]struct{} // started and not finished
	closed  bool
	stopped error // set once JavaScript ended with an uncatchable error
	host    kernel.HostBridge
	wake    chan struct{}
	done    chan struct{} // closed by Close

	sliceMu  sync.Mutex // guards running, sliceSeq and sliceEnd; held to interrupt
	running  *job       // the job whose JavaScript runs now, or nil
	sliceSeq uint64
	sliceEnd time.Time   // when the running slice's deadline passes
	guard    *time.Timer // the slice guard, reset by every slice
	halted   *job        // the job whose slice an uncatchable error ended (the unit stops)
}

type rejected struct {
	owner  *job
	reason js.Value
}

func newUnit(plugin string, prg *js.Program, opts Options) (*unit, error) {
	u := &unit{
		plugin: plugin, prg: prg, opts: opts,
		deadlineErr: fmt.Errorf("JavaScript did not finish within %s: %w", opts.Deadline, ErrDeadline),
		rt:          newRuntime(opts), jobs: map[*job]struct{}{}, unhandled: map[*js.Promise]rejected{},
		fns: map[string]*js.Object{}, fnIDs: map[*js.Object]string{}, active: map[*job]struct{}{},
		wake: make(chan struct{}, 1), done: make(chan struct{}),
	}
	if err := lockdown(u.rt); err != nil {
		return nil, err
	}
	h, err := installHarness(u.rt, u.hostFunc)
	if err != nil {
		return nil, err
	}
	u.h = h
	u.encodeFn, _ = js.AssertFunction(u.rt.ToValue(func(js.FunctionCall) js.Value {
		u.encodeOut, u.encodeErr = u.encode(u.encodeIn)
		return js.Undefined()
	}))
	u.rt.SetPromiseRejectionTracker(u.trackRejection)
	u.guard = time.AfterFunc(time.Hour, u.onGuard)
	u.guard.Stop()
	if !opts.Driven {
		go u.loop()
	}
	return u, nil
}

// Activate implements kernel.Unit: it runs the module's top level, then
// activate(cap), and returns when the promise it returned has settled and
// every host call it started has been answered.
func (u *unit) Activate(ctx context.Context, host kernel.HostBridge) error {
	if err := u.setHost(host); err != nil {
		return err
	}
	j := newJob(ctx, "activate "+u.plugin)
	j.activation = true
	_, err := u.wait(j, func() error { return u.startActivate(j) }, false)
	return err
}

// StartActivate implements Starter.
func (u *unit) StartActivate(ctx context.Context, host kernel.HostBridge, done func(error)) {
	if err := u.setHost(host); err != nil {
		done(err)
		return
	}
	j := newJob(ctx, "activate "+u.plugin)
	j.activation = true
	j.done = func(_ string, err error) { done(err) }
	u.start(j, func() error { return u.startActivate(j) }, true)
}

// Drive implements Starter.
func (u *unit) Drive() { u.drive(nil) }

func (u *unit) setHost(host kernel.HostBridge) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.closed:
		return fmt.Errorf("activate %s: %w", u.plugin, ErrClosed)
	case u.host != nil:
		return fmt.Errorf("activate %s: the unit was already activated", u.plugin)
	}
	u.host = host
	return nil
}

func (u *unit) startActivate(j *job) error {
	v, err := u.rt.RunProgram(u.prg)
	if err != nil {
		return err
	}
	wrapper, ok := js.AssertFunction(v)
	if !ok {
		return errors.New("the code did not compile to a module")
	}
	exported, err := wrapper(js.Undefined())
	if err != nil {
		return err
	}
	activate, ok := js.AssertFunction(exported)
	if !ok {
		return errors.New("the code did not export an activate function")
	}
	out, err := activate(js.Undefined(), u.h.cap)
	if err != nil {
		return err
	}
	return u.track(j, out)
}

// Call implements kernel.Unit: it calls a function the plugin handed over.
func (u *unit) Call(ctx context.Context, fn string, args json.RawMessage) (json.RawMessage, error) {
	j := newJob(ctx, "call "+fn)
	out, err := u.wait(j, u.callStart(j, fn, args), true)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(out), nil
}

// StartCall implements Starter.
func (u *unit) StartCall(ctx context.Context, fn string, args json.RawMessage, done func(json.RawMessage, error)) {
	j := newJob(ctx, "call "+fn)
	j.done = func(raw string, err error) {
		if err != nil {
			done(nil, err)
			return
		}
		done(json.RawMessage(raw), nil)
	}
	u.start(j, u.callStart(j, fn, args), true)
}

// callStart returns the first slice of a call.
func (u *unit) callStart(j *job, fn string, args json.RawMessage) func() error {
	return func() error {
		if len(args) == 0 {
			args = json.RawMessage("[]")
		}
		if len(args) > kernel.MaxSnapshotBytes {
			return fmt.Errorf("arguments of %d bytes exceed the limit of %d", len(args), kernel.MaxSnapshotBytes)
		}
		f, ok := u.fns[fn]
		if !ok {
			return fmt.Errorf("no function %s was handed to the host", quote(fn))
		}
		argv, err := u.decodeArgs(args)
		if err != nil {
			return err
		}
		callable, _ := js.AssertFunction(f)
		v, err := callable(js.Undefined(), argv...)
		if err != nil {
			return err
		}
		return u.track(j, v)
	}
}

// Close implements kernel.Unit. JavaScript running now is interrupted; every
// later call fails with ErrClosed.
func (u *unit) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	u.queue = nil
	close(u.done)
	active := make([]*job, 0, len(u.active))
	for j := range u.active {
		active = append(active, j)
	}
	u.mu.Unlock()
	u.guard.Stop()
	u.sliceMu.Lock()
	if u.running != nil {
		u.rt.Interrupt(ErrClosed)
	}
	u.sliceMu.Unlock()
	for _, j := range active {
		j.finish("", fmt.Errorf("%s: %w", j.what, ErrClosed))
	}
	return nil
}

// post queues fn for the loop and wakes a driver if none is running.
func (u *unit) post(fn func()) bool {
	return u.enqueue(fn, true)
}

// enqueue queues fn. With wake false the caller must drive the loop next,
// so that queued work never waits without a driver.
func (u *unit) enqueue(fn func(), wake bool) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return false
	}
	u.queue = append(u.queue, fn)
	if wake && !u.driving {
		u.signal()
	}
	return true
}

// signal wakes one goroutine waiting to drive (u.mu held). A driven unit
// has none: its driver drives next.
func (u *unit) signal() {
	if u.opts.Driven {
		return
	}
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

// drive runs queued work on the calling goroutine until none is left, or
// until mine (when not nil) has finished; it returns at once when another
// goroutine drives. Work left behind wakes another driver.
func (u *unit) drive(mine *job) {
	u.mu.Lock()
	if u.driving {
		u.mu.Unlock()
		return
	}
	u.driving = true
	for len(u.queue) > 0 && (mine == nil || !mine.gone.Load()) {
		fn := u.queue[0]
		u.queue[0] = nil
		u.queue = u.queue[1:]
		u.mu.Unlock()
		fn()
		u.mu.Lock()
	}
	u.driving = false
	if len(u.queue) > 0 {
		u.signal()
	}
	u.mu.Unlock()
}

// loop drives queued work that no waiting caller drives.
func (u *unit) loop() {
	for {
		select {
		case <-u.done:
			return
		case <-u.wake:
		}
		u.drive(nil)
	}
}

func (u *unit) stoppedErr() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.stopped
}

func (u *unit) hostBridge() kernel.HostBridge {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.host
}
