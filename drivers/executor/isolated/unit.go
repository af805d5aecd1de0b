package isolated

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/kernel"
)

// unit is the parent's handle on one child.
//
// Nobody reads the child's output while no request waits. A request that
// waits takes the lead if nobody holds it and reads the child's messages
// itself: its own reply returns at once, on the goroutine that waits for it,
// with no other thread woken. Messages for other requests are handed to them;
// host calls of its own job are served on its goroutine after it gives up the
// lead, so others may read meanwhile. The child's exit is noticed by a
// goroutine that reads its stderr to the end and reaps it.
type unit struct {
	pooled bool // started for the warm pool, or kept as a spare: it may die while it waits
	plugin string
	cmd    *exec.Cmd
	stdin  io.Closer
	stdout *os.File // read with deadlines by the leader
	stderr io.Closer
	conn   *conn
	tail   *stderrTail
	wait   time.Duration
	logger *slog.Logger

	// deadline bounds each request's host calls, as the child bounds the
	// job they serve; deadlineErr is why their context ends then.
	deadline    time.Duration
	deadlineErr error
	lease       *lease // the child's place in the executor's budget

	lead  chan struct{} // holds a token while a request reads the child's messages
	heard atomic.Int64  // when a message of the child was last read, in Unix nanoseconds

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]*request
	host    kernel.HostBridge
	serving int           // host calls of the child being served or waiting for a slot
	slots   chan struct{} // one per host call being served; serveAtOnce of them
	dead    error         // why the child is gone; set once
	closed  bool
	exited  chan struct{} // closed when the child has exited and dead is set
}

// maxServing bounds the child's host calls the parent serves at once. The
// child's runtime already runs at most goja.DefaultMaxHostInFlight of them;
// this holds even if the child did not, so answers being built for it can
// never pile up in the kernel.
const maxServing = 2 * goja.DefaultMaxHostInFlight

// serveAtOnce bounds the host calls the parent works on at once: each may
// build an answer of up to a snapshot's size (1 MiB) in the kernel's
// memory. Others wait for a slot, holding only their small request.
const serveAtOnce = 16

// request is a request of the parent waiting for its reply. Its reply, and
// host calls the child makes on its behalf, are handed to its goroutine by
// whoever leads; a host call that arrives while that goroutine is busy goes
// to a worker.
type request struct {
	ctx      context.Context // the caller's
	deadline time.Time       // the job's, as the parent reckons it
	cause    error           // why the host context ends at the deadline
	reply    chan message
	host     chan message

	// hostCtx is what the request's host calls are served under: ctx with
	// the job's deadline, cancelled when the request returns, so a host
	// function stops when the call it serves has ended or its caller left.
	// Made for the first host call (most requests make none).
	hostMu     sync.Mutex
	hostCtx    context.Context
	hostCancel context.CancelFunc
	ended      bool
}

// hostContext returns the context the request's host calls are served
// under, making it on first use.
func (r *request) hostContext() context.Context {
	r.hostMu.Lock()
	defer r.hostMu.Unlock()
	if r.hostCtx == nil {
		r.hostCtx, r.hostCancel = context.WithDeadlineCause(r.ctx, r.deadline, r.cause)
		if r.ended {
			r.hostCancel()
		}
	}
	return r.hostCtx
}

// end cancels the request's host context, now or when it is made.
func (r *request) end() {
	r.hostMu.Lock()
	defer r.hostMu.Unlock()
	r.ended = true
	if r.hostCancel != nil {
		r.hostCancel()
	}
}

// Activate implements kernel.Unit.
func (u *unit) Activate(ctx context.Context, host kernel.HostBridge) error {
	u.mu.Lock()
	if u.host != nil {
		u.mu.Unlock()
		return fmt.Errorf("activate %s: the unit was already activated", u.plugin)
	}
	u.host = host
	u.mu.Unlock()
	_, err := u.request(ctx, message{Op: opActivate})
	return err
}

// Call implements kernel.Unit.
func (u *unit) Call(ctx context.Context, fn string, args json.RawMessage) (json.RawMessage, error) {
	r, err := u.request(ctx, message{Op: opCall, Name: fn, Data: args})
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}

// Close implements kernel.Unit: it kills the child, which watch reaps.
// Later calls fail with goja.ErrClosed.
func (u *unit) Close() error {
	u.mu.Lock()
	already := u.closed
	u.closed = true
	u.mu.Unlock()
	if already {
		return nil
	}
	u.lease.give()
	_ = u.stdin.Close()
	u.killProcess()
	return nil
}

// request sends m and waits for its reply. Errors from the child already
// name what failed; errors found here are prefixed the same way.
func (u *unit) request(ctx context.Context, m message) (message, error) {
	r, err := u.roundTrip(ctx, m)
	var remote *remoteError
	if err != nil && !errors.As(err, &remote) {
		what := m.Op + " " + u.plugin
		if m.Op == opCall {
			what = "call " + m.Name
		}
		err = fmt.Errorf("%s: %w", what, err)
	}
	return r, err
}

// roundTrip sends m and waits for its reply.
func (u *unit) roundTrip(ctx context.Context, m message) (message, error) {
	if err := ctx.Err(); err != nil {
		return message{}, err
	}
	u.mu.Lock()
	if err := u.unusableLocked(); err != nil {
		u.mu.Unlock()
		return message{}, err
	}
	u.nextID++
	m.ID = u.nextID
	// host is unbuffered: a host call is handed over only to a goroutine
	// that is waiting for one, never queued behind the one it is serving.
	// The child starts the job's deadline when it reads the message, so
	// its host calls' context ends no later than the job does.
	req := &request{ctx: ctx, deadline: time.Now().Add(u.deadline), cause: u.deadlineErr,
		reply: make(chan message, 1), host: make(chan message)}
	u.pending[m.ID] = req
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		delete(u.pending, m.ID)
		u.mu.Unlock()
		req.end()
	}()
	if err := u.conn.send(m); err != nil {
		return message{}, u.lost(err)
	}
	return u.await(m.ID, req)
}

// await waits for the reply to request id: it leads when it can, and
// otherwise waits for the leader to hand it the reply or a host call. A
// child that answers nothing for the unit's wait is frozen, and killed; each
// message it sends for the request starts the wait over.
func (u *unit) await(id uint64, req *request) (message, error) {
	expiry := time.Now().Add(u.wait)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var out outcome
		select {
		case u.lead <- struct{}{}:
			out = u.leadFor(id, req, expiry)
		default:
			if timer == nil {
				timer = time.NewTimer(time.Until(u.silentUntil(expiry)))
			} else {
				timer.Reset(time.Until(u.silentUntil(expiry)))
			}
			out = u.follow(id, req, timer, expiry)
		}
		if out.done {
			return out.reply, out.err
		}
		if out.host.ID != 0 {
			u.serveCounted(out.host)
		}
		expiry = time.Now().Add(u.wait)
	}
}

// outcome is what one turn of await ended with: the reply (done), a host
// call of the request's own job to serve, or neither (wait again).
type outcome struct {
	done  bool
	reply message
	err   error
	host  message
}

// follow waits while another request leads.
func (u *unit) follow(id uint64, req *request, timer *time.Timer, expiry time.Time) outcome {
	ctx := req.ctx
	select {
	case r := <-req.reply:
		return outcome{done: true, reply: r, err: errorOf(r)}
	case h := <-req.host:
		return outcome{host: h}
	case u.lead <- struct{}{}:
		return u.leadFor(id, req, expiry)
	case <-ctx.Done():
		return u.cancel(ctx, id)
	case <-timer.C:
		if time.Now().Before(u.silentUntil(expiry)) {
			return outcome{}
		}
		return u.frozen()
	case <-u.exited:
		return outcome{done: true, err: u.deadErr()}
	}
}

// cancel tells the child to stop request id, and ends the wait for it.
func (u *unit) cancel(ctx context.Context, id uint64) outcome {
	_ = u.conn.send(message{Op: opCancel, ID: id})
	return outcome{done: true, err: ctx.Err()}
}

// frozen kills a child that did not answer in time.
func (u *unit) frozen() outcome {
	u.kill(fmt.Errorf("sandbox process did not answer within %s and was killed", u.wait))
	<-u.exited
	return outcome{done: true, err: u.deadErr()}
}

func (u *unit) unusableLocked() error {
	switch {
	case u.closed:
		return goja.ErrClosed
	case u.dead != nil:
		return u.dead
	}
	return nil
}

// lost reports a failed write: the child is gone, or it did not read its
// input for the unit's wait and is killed.
func (u *unit) lost(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		u.kill(fmt.Errorf("sandbox process did not read its input within %s and was killed", u.wait))
	} else {
		u.killProcess() // gone or going: watch records why
	}
	<-u.exited
	if dead := u.deadErr(); dead != nil {
		return dead
	}
	return err
}

// leadFor reads for request id while it holds the lead, and gives the lead
// up however readFor ends.
func (u *unit) leadFor(id uint64, req *request, expiry time.Time) outcome {
	defer func() { <-u.lead }()
	return u.readFor(id, req, expiry)
}

// silentUntil is when a request whose own wait ends at expiry may call the
// child frozen: not before the child has been silent for the unit's wait.
// A child busy with other requests' JavaScript reads a new message only
// between slices, so a request's reply may come later than its own wait
// while the child keeps talking.
func (u *unit) silentUntil(expiry time.Time) time.Time {
	return later(expiry, time.Unix(0, u.heard.Load()).Add(u.wait))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (u *unit) deadErr() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed && u.dead == nil {
		return goja.ErrClosed
	}
	return u.dead
}

// kill ends the child, recording why unless a reason is already known.
func (u *unit) kill(reason error) {
	u.mu.Lock()
	if u.dead == nil {
		u.dead = kernel.Stopped(reason)
	}
	u.mu.Unlock()
	u.killProcess()
}

// killGrace is how long a killed child's stderr may stay open (held by a
// process of its own) before watch stops reading it and reaps the child.
const killGrace = time.Second

func (u *unit) killProcess() {
	_ = u.cmd.Process.Kill()
	time.AfterFunc(killGrace, func() { _ = u.stderr.Close() })
}
