package isolated

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/internal/workers"
	"github.com/sms-baseline/sms/kernel"
)

// readFor reads the child's messages while request id leads, until its
// reply arrives, one of its job's host calls arrives (served after the lead
// is given up), its context ends, the child stays silent past expiry, or the
// child is gone. Everything else it reads goes to whom it is for.
func (u *unit) readFor(id uint64, req *request, expiry time.Time) outcome {
	ctx := req.ctx
	// A cancellation interrupts the read; the deadline is set again before
	// every read, so one meant for an earlier leader only costs a turn.
	stop := context.AfterFunc(ctx, func() { _ = u.stdout.SetReadDeadline(time.Now()) })
	defer stop()
	for {
		select {
		case r := <-req.reply: // handed over by an earlier leader
			return outcome{done: true, reply: r, err: errorOf(r)}
		case <-u.exited:
			return outcome{done: true, err: u.deadErr()}
		default:
		}
		if err := u.stdout.SetReadDeadline(u.silentUntil(expiry)); err != nil {
			return outcome{done: true, err: u.lostRead(err)}
		}
		if ctx.Err() != nil {
			return u.cancel(ctx, id)
		}
		m, err := u.conn.recv()
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			if ctx.Err() == nil && !time.Now().Before(u.silentUntil(expiry)) {
				return u.frozen()
			}
			continue
		case err != nil:
			return outcome{done: true, err: u.lostRead(err)}
		}
		u.heard.Store(time.Now().UnixNano())
		switch {
		case m.Reply == id:
			return outcome{done: true, reply: m, err: errorOf(m)}
		case m.Reply == 0 && m.Op != opLog && m.Job == id && m.Live == 1:
			// The child says nothing more until this is answered, so
			// nothing is left unread while it is served on this goroutine.
			// With more in flight, one may wait for another: it goes to a
			// worker (route), and this goroutine keeps reading.
			if u.admit(m) {
				return outcome{host: m}
			}
		default:
			u.route(m)
		}
	}
}

// route hands a message read by a leader to whom it is for.
func (u *unit) route(m message) {
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

// lostRead ends a read that failed: a child whose output ended or broke the
// protocol is gone.
func (u *unit) lostRead(err error) error {
	if u.gone() {
		// Closed or exited meanwhile: whatever the read said, that is why.
		<-u.exited
		return u.deadErr()
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
		u.kill(fmt.Errorf("sandbox process broke the protocol and was killed: %w", err))
	}
	// A child whose output ended is exiting; watch records why. One that
	// lives on without it is of no use.
	select {
	case <-u.exited:
	case <-time.After(u.wait):
		u.kill(errors.New("sandbox process closed its output and was killed"))
		<-u.exited
	}
	return u.deadErr()
}

// admit counts a host call of the child towards maxServing, or refuses it.
func (u *unit) admit(m message) bool {
	u.mu.Lock()
	if u.serving >= maxServing {
		u.mu.Unlock()
		_ = u.conn.send(failure(message{Reply: m.ID}, fmt.Errorf("more than %d cap calls of %s are running at once", maxServing, u.plugin)))
		return false
	}
	u.serving++
	u.mu.Unlock()
	return true
}

// dispatch hands a host call to the goroutine waiting for the request it
// serves, or to a worker when that goroutine is busy or gone. It never
// blocks: the leader must keep reading.
func (u *unit) dispatch(m message) {
	if !u.admit(m) {
		return
	}
	u.mu.Lock()
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

// deliver hands a reply to the request waiting for it. A reply nobody waits
// for, or a second one, is dropped: the leader never blocks on it.
func (u *unit) deliver(m message) {
	u.mu.Lock()
	req := u.pending[m.Reply]
	u.mu.Unlock()
	if req != nil {
		select {
		case req.reply <- m:
		default:
		}
	}
}

// serveCounted serves a host call admitted in u.serving, once a slot is
// free.
func (u *unit) serveCounted(m message) {
	defer func() {
		u.mu.Lock()
		u.serving--
		u.mu.Unlock()
	}()
	if !u.takeSlot(m) {
		return
	}
	defer func() { <-u.slots }()
	u.serve(m)
}

// takeSlot waits for a free slot to serve m in. It gives up, answering m
// with why, when the request m serves ends first: its host calls waiting
// behind others' must not outlive it.
func (u *unit) takeSlot(m message) bool {
	u.mu.Lock()
	req := u.pending[m.Job]
	u.mu.Unlock()
	if req == nil {
		u.slots <- struct{}{} // serve refuses it
		return true
	}
	ctx := req.hostContext()
	select {
	case u.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		_ = u.conn.send(failure(message{Reply: m.ID}, fmt.Errorf("cap call not served: %w", context.Cause(ctx))))
		return false
	}
}

// serve answers one host call of the child with the parent's HostBridge,
// under the host context of the request it serves: it ends at that
// request's deadline, when its caller's context ends, or when it returns.
func (u *unit) serve(m message) {
	u.mu.Lock()
	host := u.host
	req := u.pending[m.Job]
	u.mu.Unlock()
	ctx := context.Background()
	switch {
	case req != nil:
		ctx = req.hostContext()
	case m.Op != opLog:
		// The request it serves has ended (cancelled, or out of time):
		// nobody waits for what it would do.
		_ = u.conn.send(failure(message{Reply: m.ID}, errors.New("the call this cap call serves has ended")))
		return
	}
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

// watch reads the child's stderr into the tail until it ends, which it does
// when the child exits, then reaps the child and records why it is gone.
func (u *unit) watch(stderr io.Reader) {
	_, _ = io.Copy(u.tail, stderr)
	waitErr := u.cmd.Wait()
	u.lease.give()
	u.mu.Lock()
	if u.dead == nil && !u.closed {
		u.dead = kernel.Stopped(u.exitError(waitErr))
		u.logger.Warn("Sandbox process exited", "plugin", u.plugin, "error", u.dead, "stderr", u.tail.String())
	}
	u.mu.Unlock()
	close(u.exited)
	_ = u.stdout.Close()
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
