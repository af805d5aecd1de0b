package isolated

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/internal/workers"
	"github.com/sms-baseline/sms/kernel"
)

// unit is the parent's handle on one child. Requests wait for their reply;
// one reader goroutine routes replies to them and serves the child's host
// calls, each on its own goroutine, with the parent's HostBridge.
type unit struct {
	plugin string
	cmd    *exec.Cmd
	stdin  io.Closer
	conn   *conn
	tail   *stderrTail
	wait   time.Duration
	logger *slog.Logger

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

// request is a request of the parent waiting for its reply. Host calls the
// child makes on its behalf are handed to its goroutine, which is idle
// meanwhile; one that arrives while that goroutine is busy goes to a worker.
type request struct {
	ctx   context.Context
	reply chan message
	host  chan message
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

// Close implements kernel.Unit: it kills the child and waits for it to be
// reaped. Later calls fail with goja.ErrClosed.
func (u *unit) Close() error {
	u.mu.Lock()
	already := u.closed
	u.closed = true
	u.mu.Unlock()
	if already {
		return nil
	}
	_ = u.stdin.Close()
	_ = u.cmd.Process.Kill()
	<-u.exited
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

// roundTrip sends m and waits for its reply. A child that does not answer
// within the unit's wait is frozen, and killed.
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
	req := &request{ctx: ctx, reply: make(chan message, 1), host: make(chan message)}
	u.pending[m.ID] = req
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		delete(u.pending, m.ID)
		u.mu.Unlock()
	}()
	if err := u.conn.send(m); err != nil {
		return message{}, u.lost(err)
	}
	timer := time.NewTimer(u.wait)
	defer timer.Stop()
	for {
		r, done, err := u.await(ctx, m.ID, req, timer)
		if done {
			return r, err
		}
		// The child just asked something, so it is alive: the watchdog
		// starts over, and time spent answering is not held against it.
		timer.Reset(u.wait)
	}
}

// await waits for the reply to request id; done is false after it served
// a host call handed to it instead.
func (u *unit) await(ctx context.Context, id uint64, req *request, timer *time.Timer) (message, bool, error) {
	select {
	case h := <-req.host:
		u.serveCounted(h)
		return message{}, false, nil
	case r := <-req.reply:
		return r, true, errorOf(r)
	case <-ctx.Done():
		_ = u.conn.send(message{Op: opCancel, ID: id})
		return message{}, true, ctx.Err()
	case <-timer.C:
		u.kill(fmt.Errorf("sandbox process did not answer within %s and was killed", u.wait))
		<-u.exited
		return message{}, true, u.deadErr()
	case <-u.exited:
		return message{}, true, u.deadErr()
	}
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

// lost reports a failed write: the child is gone or going.
func (u *unit) lost(err error) error {
	<-u.exited
	if dead := u.deadErr(); dead != nil {
		return dead
	}
	return err
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
		u.dead = reason
	}
	u.mu.Unlock()
	_ = u.cmd.Process.Kill()
}

// read is the unit's reader goroutine. When the pipe ends it reaps the child
// and records why it is gone.
func (u *unit) read() {
	for {
		m, err := u.conn.recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				u.kill(fmt.Errorf("sandbox process broke the protocol and was killed: %w", err))
			}
			break
		}
		switch {
		case m.Reply != 0:
			u.deliver(m)
		case m.Op == opLog:
			// Inline, so a line logged before a reply is written before the
			// request it belongs to returns.
			u.serve(m)
		default:
			u.dispatch(m)
		}
	}
	waitErr := u.cmd.Wait()
	u.mu.Lock()
	if u.dead == nil && !u.closed {
		u.dead = u.exitError(waitErr)
		u.logger.Warn("Sandbox process exited", "plugin", u.plugin, "error", u.dead, "stderr", u.tail.String())
	}
	u.mu.Unlock()
	close(u.exited)
}

// outOfMemory are the last words of a Go child whose allocation failed
// (with the race detector, the last two).
var outOfMemory = []string{"out of memory", "address space collisions", "failed to allocate"}

func (u *unit) exitError(waitErr error) error {
	var b strings.Builder
	b.WriteString("sandbox process exited")
	if waitErr != nil {
		b.WriteString(": " + waitErr.Error())
	}
	if last := u.tail.lastWords(); last != "" {
		for _, s := range outOfMemory {
			if strings.Contains(last, s) && !strings.Contains(last, outOfMemory[0]) {
				b.WriteString(": " + outOfMemory[0])
				break
			}
		}
		b.WriteString(": " + last)
	}
	return errors.New(b.String())
}

// dispatch hands a host call to the goroutine waiting for the request it
// serves, or to a worker when that goroutine is busy or gone. It never
// blocks: the reader must keep reading.
func (u *unit) dispatch(m message) {
	u.mu.Lock()
	if u.serving >= maxServing {
		u.mu.Unlock()
		_ = u.conn.send(failure(message{Reply: m.ID}, fmt.Errorf("more than %d cap calls of %s are running at once", maxServing, u.plugin)))
		return
	}
	u.serving++
	req := u.pending[m.Job]
	u.mu.Unlock()
	if req != nil {
		select {
		case req.host <- m:
			return
		default:
		}
	}
	workers.Go(func() { u.serveCounted(m) })
}

func (u *unit) deliver(m message) {
	u.mu.Lock()
	req := u.pending[m.Reply]
	u.mu.Unlock()
	if req != nil {
		req.reply <- m
	}
}

// serveCounted serves a host call dispatch counted in u.serving, once a
// slot is free.
func (u *unit) serveCounted(m message) {
	u.slots <- struct{}{}
	defer func() {
		<-u.slots
		u.mu.Lock()
		u.serving--
		u.mu.Unlock()
	}()
	u.serve(m)
}

// serve answers one host call of the child with the parent's HostBridge,
// under the context of the request it serves.
func (u *unit) serve(m message) {
	u.mu.Lock()
	host := u.host
	ctx := context.Background()
	if req := u.pending[m.Job]; req != nil {
		ctx = req.ctx
	}
	u.mu.Unlock()
	if host == nil {
		_ = u.conn.send(failure(message{Reply: m.ID}, errors.New("the plugin is not activated")))
		return
	}
	r := message{Reply: m.ID}
	var err error
	switch m.Op {
	case opLog:
		host.Log(ctx, m.Level, m.Text)
		return
	case opGet:
		r.Data, err = host.Get(ctx, m.Name)
	case opInvoke:
		r.Data, err = host.Invoke(ctx, m.Name, m.Method, m.Data)
	case opProvide:
		err = host.Provide(ctx, m.Name, m.Data)
	case opContribute:
		r.Text, err = host.Contribute(ctx, m.Name, m.Data)
	default:
		err = fmt.Errorf("unknown host operation %q", m.Op)
	}
	_ = u.conn.send(failure(r, err))
}

// stderrTail keeps what a child wrote to stderr: the first line that says
// why it is dying, and the last few kilobytes for the log.
type stderrTail struct {
	mu    sync.Mutex
	first string
	buf   []byte
}

const tailSize = 4 << 10

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if t.first == "" {
		lines := bytes.Split(t.buf, []byte("\n"))
		for _, line := range lines[:len(lines)-1] { // complete lines only
			s := string(line)
			if strings.HasPrefix(s, "fatal error:") || strings.HasPrefix(s, "panic:") || strings.HasPrefix(s, "sandbox:") ||
				strings.HasPrefix(s, "runtime: out of memory") || strings.Contains(s, "ThreadSanitizer failed to allocate") {
				t.first = s
				break
			}
		}
	}
	if len(t.buf) > tailSize {
		t.buf = t.buf[len(t.buf)-tailSize:]
	}
	return len(p), nil
}

// String returns the kept tail.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lastWords returns the line that explains the exit, or the last line.
func (t *stderrTail) lastWords() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.first != "" {
		return t.first
	}
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return lines[len(lines)-1]
}
