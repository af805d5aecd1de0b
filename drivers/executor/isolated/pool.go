package isolated

import (
	"errors"
	"sync"
	"time"
)

// DefaultWarmIdle is how long a warm pool stays warm after its last Load.
const DefaultWarmIdle = time.Minute

// pool keeps children started ahead of need, so that Load does not wait for
// a process to start: the judge's load gate and the mount that follows each
// take one. It fills when a Load takes a child (the first Load starts its
// own), and empties after WarmIdle without one, so an idle kernel keeps no
// children it does not use.
type pool struct {
	e        *Executor
	want     int
	idle     time.Duration
	refillIn time.Duration // refillAfter, but for tests

	mu       sync.Mutex
	ready    []*unit
	starting int
	warm     bool      // taken from since it last emptied
	lastTake time.Time // when a Load last took from it
	drain    *time.Timer
	refill   *time.Timer
}

// take returns a started child, or nil when none is ready, and starts
// replacements in the background.
func (p *pool) take() *unit {
	if p.want <= 0 {
		return nil
	}
	p.mu.Lock()
	var u *unit
	for u == nil && len(p.ready) > 0 {
		u = p.ready[0]
		p.ready = p.ready[1:]
		if u.gone() {
			u = nil
		}
	}
	p.warm, p.lastTake = true, time.Now()
	if p.drain == nil {
		p.drain = time.AfterFunc(p.idle, p.empty)
		p.refill = time.AfterFunc(p.refillIn, p.top)
	} else {
		p.drain.Reset(p.idle)
		p.refill.Reset(p.refillIn)
	}
	p.mu.Unlock()
	return u
}

// refillAfter is how long the pool waits after a take before it starts
// replacements, so that starting processes does not compete for the CPU
// with the work that took the child (a submission takes two in a row).
const refillAfter = 20 * time.Millisecond

// top starts the children the pool lacks.
func (p *pool) top() {
	p.mu.Lock()
	missing := 0
	if p.warm {
		// Warm children count against the budget: the pool keeps no more
		// than it has room for.
		missing = max(min(p.want-len(p.ready)-p.starting, p.e.budget.room()), 0)
	}
	p.starting += missing
	p.mu.Unlock()
	for range missing {
		go p.fill()
	}
}

// fill starts one child for the pool and has it warm up (see warm.go):
// the child is ready only once it answered, so a Load that takes it
// waits for neither its start nor its first run of JavaScript.
func (p *pool) fill() {
	u, err := p.e.start("")
	if err == nil {
		err = u.warmUp()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starting--
	switch {
	case errors.Is(err, ErrLimit):
		// Loads took the room meanwhile: the pool keeps fewer warm.
	case err != nil:
		p.e.opts.Logger.Warn("Could not start a sandbox process ahead of need", "error", err)
	case !p.warm:
		go func() { _ = u.Close() }() // the pool emptied meanwhile
	default:
		p.ready = append(p.ready, u)
	}
}

// empty closes the children of a pool that was not used for its idle time.
func (p *pool) empty() {
	p.mu.Lock()
	if time.Since(p.lastTake) < p.idle {
		// A take reset the timer after it fired: the pool is in use.
		p.mu.Unlock()
		return
	}
	ready := p.ready
	p.ready, p.warm = nil, false
	p.mu.Unlock()
	for _, u := range ready {
		_ = u.Close()
	}
}

// gone reports whether the child exited or was closed.
func (u *unit) gone() bool {
	select {
	case <-u.exited:
		return true
	default:
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.closed
}

// claim names the plugin a child now serves and the requester it was
// loaded for, whose place in the budget its lease now carries.
func (u *unit) claim(plugin, who string) {
	u.mu.Lock()
	u.plugin = plugin
	u.mu.Unlock()
	u.lease.claim(who)
}

// Ready reports how many children are started and waiting for a Load.
func (e *Executor) Ready() int {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	return len(e.pool.ready)
}

// Warming reports whether the pool is filled: a Load took from it and it has
// not emptied since.
func (e *Executor) Warming() bool {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	return e.pool.warm
}
