package isolated

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/kernel"
)

// DefaultIdleAfter is how long a plugin's child lives without a call
// before it exits (Options.IdleAfter).
const DefaultIdleAfter = time.Minute

// plugin is what Load returns: one agent plugin's unit, whose child exits
// once the plugin has been idle for IdleAfter and starts again on its next
// call. The kernel keeps the plugin's contributions throughout: the new
// child compiles the same code and runs activate again against a replay of
// the first activation's host calls (see replay), which hands back the
// answers the kernel gave then and calls nothing in the kernel, so the
// functions it hands over get the ids the kernel already holds. An
// activation that does not repeat itself fails the plugin.
type plugin struct {
	e      *Executor
	bundle kernel.Bundle
	who    string // the requester its children count for
	trial  bool   // loaded under kernel.WithTrial

	mu       sync.Mutex
	child    *unit // nil while asleep
	host     kernel.HostBridge
	rec      *record // the first activation's host calls, once it settled
	inflight int
	used     time.Time // when a call last ended
	timer    *time.Timer
	waking   chan struct{} // closed when a wake in progress ends
	failed   error         // why the plugin cannot wake again
	called   bool          // a call reached its unit
	closed   bool
}

// Activate implements kernel.Unit: it runs the first activation, recording
// its host calls.
func (p *plugin) Activate(ctx context.Context, host kernel.HostBridge) error {
	p.mu.Lock()
	c := p.child
	p.host = host
	p.mu.Unlock()
	if c == nil {
		return goja.ErrClosed
	}
	rec := newRecorder(host)
	err := c.Activate(ctx, rec)
	r := rec.finish()
	p.mu.Lock()
	if err == nil {
		p.rec = r
	}
	p.mu.Unlock()
	p.release()
	return err
}

// Call implements kernel.Unit: it wakes the plugin if it sleeps.
func (p *plugin) Call(ctx context.Context, fn string, args json.RawMessage) (json.RawMessage, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer p.release()
	return c.Call(ctx, fn, args)
}

// Close implements kernel.Unit. A trial unit (kernel.WithTrial) closed
// after an activation that succeeded, and before any call, keeps its child
// as a spare for the same code (see spares).
func (p *plugin) Close() error {
	p.mu.Lock()
	c := p.child
	spare := p.trial && c != nil && p.rec != nil && !p.called && c.deadErr() == nil
	p.child, p.closed = nil, true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	p.e.sleepers.remove(p)
	switch {
	case spare:
		p.e.spares.keep(c, p.bundle, p.who)
	case c != nil:
		return c.Close()
	}
	return nil
}

// acquire returns the plugin's child, woken if it slept, and counts a call
// in flight until release.
func (p *plugin) acquire(ctx context.Context) (*unit, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		switch {
		case p.closed:
			return nil, goja.ErrClosed
		case p.failed != nil:
			return nil, p.failed
		case p.child != nil:
			p.inflight++
			p.called = true
			return p.child, nil
		case p.waking != nil:
			w := p.waking
			p.mu.Unlock()
			select {
			case <-w:
			case <-ctx.Done():
				p.mu.Lock()
				return nil, ctx.Err()
			}
			p.mu.Lock()
		case p.rec == nil:
			return nil, fmt.Errorf("call %s: the plugin was not activated: %w", p.bundle.Manifest.ID, goja.ErrClosed)
		default:
			p.waking = make(chan struct{})
			p.mu.Unlock()
			c, err := p.wake(ctx)
			p.mu.Lock()
			close(p.waking)
			p.waking = nil
			if err != nil {
				if !errors.Is(err, ErrLimit) { // a bound may free up; anything else will not
					p.failed = err
				}
				return nil, err
			}
			if p.closed {
				_ = c.Close()
				return nil, goja.ErrClosed
			}
			p.child = c
		}
	}
}

// wake starts a child, has it compile the code and replays the first
// activation into it.
func (p *plugin) wake(ctx context.Context) (*unit, error) {
	ctx = context.WithoutCancel(ctx) // one caller leaving fails no other waiting for the wake
	c, err := p.e.loaded(ctx, p.bundle, p.who)
	if err != nil {
		return nil, err
	}
	rp := newReplay(p.host, p.rec)
	err = c.Activate(ctx, rp)
	if err = errors.Join(err, rp.finish()); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("wake %s after it idled: %w", p.bundle.Manifest.ID, err)
	}
	return c, nil
}

// release ends a call in flight, and lets the child exit once the plugin
// has been idle for IdleAfter.
func (p *plugin) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inflight > 0 {
		p.inflight--
	}
	p.used = time.Now()
	idle := p.e.opts.IdleAfter
	if p.inflight > 0 || idle <= 0 || !p.rec.replayable() {
		return
	}
	if p.timer == nil {
		p.timer = time.AfterFunc(idle, p.idled)
	} else {
		p.timer.Reset(idle)
	}
}

// idled puts the plugin to sleep if it stayed idle.
func (p *plugin) idled() {
	p.mu.Lock()
	wait := p.e.opts.IdleAfter - time.Since(p.used)
	if wait > 0 && p.inflight == 0 && p.child != nil {
		p.timer.Reset(wait) // a call ended after the timer was set
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.sleep()
}

// sleep closes the child of an idle plugin, which frees its place in the
// budget; it reports whether it did. A child that died stays, so that the
// plugin's calls keep failing with why.
func (p *plugin) sleep() bool {
	p.mu.Lock()
	c := p.child
	if !p.sleepableLocked() {
		p.mu.Unlock()
		return false
	}
	p.child = nil
	p.mu.Unlock()
	_ = c.Close()
	return true
}

// sleepableLocked reports whether the plugin can be put to sleep now: it
// is awake with a live child, no call is in flight, and its activation
// can be replayed. p.mu is held.
func (p *plugin) sleepableLocked() bool {
	return p.child != nil && p.inflight == 0 && p.rec.replayable() && p.child.deadErr() == nil
}

// Defaults for Options.MaxUnits and MaxUnitsPerRequester.
const (
	DefaultMaxUnits             = 128
	DefaultMaxUnitsPerRequester = 64
)

// sleepers are an executor's plugins, counted against MaxUnits, and found
// to put the least recently used idle one to sleep when a bound on
// children is reached.
type sleepers struct {
	mu    sync.Mutex
	all   map[*plugin]struct{}
	byWho map[string]int
}

// admit counts a plugin about to load for who, without its child yet, or
// refuses past MaxUnits or MaxUnitsPerRequester.
func (s *sleepers) admit(e *Executor, b kernel.Bundle, who string) (*plugin, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := b.Manifest.ID
	switch {
	case len(s.all) >= e.opts.MaxUnits:
		return nil, refusal(id, fmt.Sprintf("the kernel already holds %d agent plugins' units, its limit (MaxUnits)", len(s.all)))
	case who != "" && s.byWho[who] >= e.opts.MaxUnitsPerRequester:
		return nil, refusal(id, fmt.Sprintf("%q already holds %d agent plugins' units, the limit per requester (MaxUnitsPerRequester)", who, s.byWho[who]))
	}
	if s.all == nil {
		s.all, s.byWho = map[*plugin]struct{}{}, map[string]int{}
	}
	p := &plugin{e: e, bundle: b, who: who, inflight: 1}
	s.all[p] = struct{}{}
	if who != "" {
		s.byWho[who]++
	}
	return p, nil
}

// remove gives back what admit counted; a second call does nothing.
func (s *sleepers) remove(p *plugin) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.all[p]; !ok {
		return
	}
	delete(s.all, p)
	if p.who != "" {
		if s.byWho[p.who]--; s.byWho[p.who] <= 0 {
			delete(s.byWho, p.who)
		}
	}
}

// evict puts to sleep the awake idle plugin (one loaded for who, unless who
// is "") whose last call ended first, and reports whether there was one.
func (s *sleepers) evict(who string) bool {
	for range maxEvictTries {
		p := s.oldestIdle(who)
		if p == nil {
			return false
		}
		if p.sleep() {
			return true
		}
	}
	return false
}

// maxEvictTries bounds how often evict picks a plugin that a call woke
// before it could be put to sleep.
const maxEvictTries = 8

// oldestIdle picks the candidate evict tries; the loop in evict skips one
// that a call woke meanwhile.
func (s *sleepers) oldestIdle(who string) *plugin {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *plugin
	var bestUsed time.Time
	for p := range s.all {
		p.mu.Lock()
		ok := p.sleepableLocked() && (who == "" || p.who == who)
		used := p.used
		p.mu.Unlock()
		if ok && (best == nil || used.Before(bestUsed)) {
			best, bestUsed = p, used
		}
	}
	return best
}
