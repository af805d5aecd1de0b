package isolated

import (
	"context"
	"sync"
	"time"

	"github.com/sms-baseline/sms/kernel"
)

// A submission loads its plugin twice: the judge's load gate activates it
// against a recorder and closes it, and the mount loads the same code again
// for the kernel. Each Load took a child of its own, and starting and
// warming a child is most of what a submission costs in this executor. So
// a trial unit (kernel.WithTrial) closed after an activation that
// succeeded, and before any call, keeps its child for a moment as a spare: the child drops the unit (its
// JavaScript runtime is closed, its jobs end) and waits, and only a Load
// of the same plugin, the same code and the same requester takes it. No
// other plugin's code, and no other requester's, ever runs in it; what the
// earlier activation leaves is the process's CPU time and the memory its
// heap grew to, both within the child's limits as before.

// spareFor is how long a spare child waits for its Load before it is
// closed; maxSpares bounds how many wait at once.
const (
	spareFor  = time.Second
	maxSpares = 2
)

// resetWait bounds how long Close waits for a child to drop its unit:
// a healthy child answers within milliseconds, and one that does not is
// closed, so the load gate (which judges one submission at a time) never
// waits on a trial's child for longer.
const resetWait = 250 * time.Millisecond

// spareKey is what a Load must match to take a spare.
type spareKey struct{ id, hash, who string }

// spares are an executor's children kept for the same code.
type spares struct {
	keepFor time.Duration // spareFor, but for tests

	mu   sync.Mutex
	kept []*spare // oldest first
}

type spare struct {
	key   spareKey
	u     *unit
	timer *time.Timer
}

// keep resets u's child and keeps it as a spare for b and who; it closes
// u instead when the child does not answer, or maxSpares wait already.
func (s *spares) keep(u *unit, b kernel.Bundle, who string) {
	ctx, cancel := context.WithTimeout(context.Background(), min(u.wait, resetWait))
	defer cancel()
	if _, err := u.request(ctx, message{Op: opReset}); err != nil {
		_ = u.Close()
		return
	}
	u.mu.Lock()
	u.pooled, u.host = true, nil // the next unit in it is activated afresh
	u.mu.Unlock()
	sp := &spare{key: spareKey{b.Manifest.ID, b.CodeHash, who}, u: u}
	s.mu.Lock()
	var evicted *unit
	if len(s.kept) >= maxSpares {
		evicted = s.kept[0].u
		s.kept[0].timer.Stop()
		s.kept = s.kept[1:]
	}
	keepFor := s.keepFor
	if keepFor <= 0 {
		keepFor = spareFor
	}
	sp.timer = time.AfterFunc(keepFor, func() { s.expire(sp) })
	s.kept = append(s.kept, sp)
	s.mu.Unlock()
	if evicted != nil {
		_ = evicted.Close()
	}
}

// take returns a live spare kept for b and who, or nil.
func (s *spares) take(b kernel.Bundle, who string) *unit {
	key := spareKey{b.Manifest.ID, b.CodeHash, who}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < len(s.kept); {
		sp := s.kept[i]
		if sp.key != key {
			i++
			continue
		}
		sp.timer.Stop()
		s.kept = append(s.kept[:i], s.kept[i+1:]...)
		if !sp.u.gone() {
			return sp.u
		}
		go func() { _ = sp.u.Close() }() // died while it waited: try the next
	}
	return nil
}

// expire closes a spare nobody took.
func (s *spares) expire(sp *spare) {
	s.mu.Lock()
	for i, k := range s.kept {
		if k == sp {
			s.kept = append(s.kept[:i], s.kept[i+1:]...)
			s.mu.Unlock()
			_ = sp.u.Close()
			return
		}
	}
	s.mu.Unlock()
}

// drop closes every spare, to make room at a bound; it reports whether
// there was one.
func (s *spares) drop() bool {
	s.mu.Lock()
	kept := s.kept
	s.kept = nil
	s.mu.Unlock()
	for _, sp := range kept {
		sp.timer.Stop()
		_ = sp.u.Close()
	}
	return len(kept) > 0
}

// Spares reports how many children wait as spares.
func (e *Executor) Spares() int {
	e.spares.mu.Lock()
	defer e.spares.mu.Unlock()
	return len(e.spares.kept)
}
