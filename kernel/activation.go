package kernel

import (
	"sync"
	"time"
)

// activation is one activation of an agent fiber: the unit its code runs
// in and the calls running there. A transition marks the activations it
// replaces draining: they keep answering the calls that reach them (work
// that started on the old version finishes there) and hold back the
// Removed notifications of observers that take them late
// (Observer.LateRemove) until the new version is in place. After that a
// grace period lets callers that already matched the old version reach
// it; then the activation waits for its calls to end and closes its unit.
type activation struct {
	mu       sync.Mutex
	unit     Unit
	inflight int
	draining bool           // replaced by a transition: still serving until closed
	closed   bool           // its unit is closed (or closing): calls are refused
	late     []func()       // held-back Removed notifications, in undo order
	flushed  bool           // late notifications delivered
	forced   bool           // close now, whatever still runs
	stop     chan struct{}  // closed by force
	snap     map[string]any // the declared keys' values when it was marked draining
	idle     *sync.Cond
}

func newActivation() *activation {
	a := &activation{stop: make(chan struct{})}
	a.idle = sync.NewCond(&a.mu)
	return a
}

// setUnit records the loaded unit.
func (a *activation) setUnit(u Unit) {
	a.mu.Lock()
	a.unit = u
	a.mu.Unlock()
}

// serving reports whether a transition replaced the activation and it still
// answers calls.
func (a *activation) serving() bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.draining && !a.closed
}

// enter counts a call in; it fails once the unit is closed.
func (a *activation) enter() bool {
	if a == nil {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	a.inflight++
	return true
}

// leave counts a call out.
func (a *activation) leave() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.inflight--
	if a.inflight == 0 {
		a.idle.Broadcast()
	}
	a.mu.Unlock()
}

// calls returns how many calls run in the activation now.
func (a *activation) calls() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inflight
}

// drainable marks the activation draining with the values its declared
// keys have now; it reports false when it was already closed.
func (a *activation) drainable(snap map[string]any) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	a.draining, a.snap = true, snap
	return true
}

// keys returns the values a draining activation reads.
func (a *activation) keys() map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.snap
}

// hold keeps a Removed notification for the flush when the activation is
// draining, and reports whether it did.
func (a *activation) hold(notify func()) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.draining || a.flushed {
		return false
	}
	a.late = append(a.late, notify)
	return true
}

// flush delivers the held-back notifications once.
func (a *activation) flush() {
	a.mu.Lock()
	late := a.late
	done := a.flushed
	a.late, a.flushed = nil, true
	a.mu.Unlock()
	if done {
		return
	}
	for _, notify := range late {
		notify()
	}
}

// close is the unit's undo: it closes the unit now, unless a transition
// drains the activation, which closes it when its calls have ended.
func (a *activation) close() error {
	a.mu.Lock()
	if a.draining || a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	u := a.unit
	a.mu.Unlock()
	if u == nil {
		return nil
	}
	return u.Close()
}

// drain waits grace, then for the calls running to end (at most timeout:
// then they are stopped with the unit), and closes the unit.
func (a *activation) drain(grace, timeout time.Duration, closed <-chan struct{}) error {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-t.C:
	case <-closed:
	case <-a.stop:
	}
	deadline := time.AfterFunc(timeout, func() {
		a.mu.Lock()
		a.idle.Broadcast()
		a.mu.Unlock()
	})
	defer deadline.Stop()
	start := time.Now()
	a.mu.Lock()
	for a.inflight > 0 && !a.forced && time.Since(start) < timeout {
		a.idle.Wait()
	}
	a.closed = true
	u := a.unit
	a.mu.Unlock()
	if u == nil {
		return nil
	}
	return u.Close()
}

// force makes a drain close the unit now, under the calls still running.
func (a *activation) force() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.forced {
		a.forced = true
		close(a.stop)
		a.idle.Broadcast()
	}
}
