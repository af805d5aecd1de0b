package auth

import (
	"fmt"
	"sync"
	"time"
)

// Failed logins, counted per login whether or not a user has it (so the
// answers and their timing say nothing about which logins exist):
//   - the first freeFailures cost nothing more than the hash;
//   - each one after that is answered only after slowStep × its number,
//     up to lockAfter;
//   - from lockAfter on, every attempt is refused for lockFor, doubling
//     with each further failure up to maxLock, without checking the
//     password at all.
//
// A success clears the count. The counts live in this kernel's memory:
// a restart forgets them.
const (
	freeFailures     = 2
	slowStep         = 250 * time.Millisecond
	lockAfter        = 5
	lockFor          = time.Minute
	maxLock          = 15 * time.Minute
	forgetAfter      = 30 * time.Minute
	maxTrackedLogins = 10000
)

// throttle counts failed logins.
type throttle struct {
	mu    sync.Mutex
	fails map[string]*failures
}

type failures struct {
	count int
	last  time.Time
	until time.Time
}

func newThrottle() *throttle { return &throttle{fails: map[string]*failures{}} }

// throttledError says how long to wait.
type throttledError struct{ retry time.Duration }

func (e *throttledError) Error() string {
	return fmt.Sprintf("%s: try again in %d s", ErrThrottled, int(e.retry.Seconds()+0.999))
}

func (e *throttledError) Unwrap() error { return ErrThrottled }

// check refuses a login that is locked now.
func (t *throttle) check(login string, now time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.fails[login]; f != nil && now.Before(f.until) {
		return &throttledError{retry: f.until.Sub(now)}
	}
	return nil
}

// fail counts a failure and returns how long to wait before answering.
func (t *throttle) fail(login string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.fails[login]
	if f == nil {
		t.makeRoom(now)
		f = &failures{}
		t.fails[login] = f
	}
	f.count++
	f.last = now
	if f.count >= lockAfter {
		lock := lockFor << min(f.count-lockAfter, 10)
		f.until = now.Add(min(lock, maxLock))
		return 0
	}
	if f.count > freeFailures {
		return slowStep * time.Duration(f.count-freeFailures)
	}
	return 0
}

// succeed clears a login's count.
func (t *throttle) succeed(login string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.fails, login)
}

// makeRoom keeps the map under maxTrackedLogins: it forgets the counts
// nobody added to lately and, if that is not enough, the one that would
// be released soonest (its lock's end, or its last failure).
func (t *throttle) makeRoom(now time.Time) {
	if len(t.fails) < maxTrackedLogins {
		return
	}
	var soonest string
	var soonestAt time.Time
	for login, f := range t.fails {
		if now.Sub(f.last) > forgetAfter && !now.Before(f.until) {
			delete(t.fails, login)
			continue
		}
		at := f.last
		if f.until.After(at) {
			at = f.until
		}
		if soonest == "" || at.Before(soonestAt) {
			soonest, soonestAt = login, at
		}
	}
	if len(t.fails) >= maxTrackedLogins {
		delete(t.fails, soonest)
	}
}
