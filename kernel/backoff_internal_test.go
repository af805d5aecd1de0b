package kernel

import (
	"errors"
	"testing"
	"time"
)

// Restarts in a row back off: none before the first, then 1 s doubling up
// to 5 min. Seen failing with the doubling loop starting at i = 1 (the
// second restart waited 2 s).
func TestRestartBackoff(t *testing.T) {
	for _, tc := range []struct {
		n    int32
		want time.Duration
	}{{0, 0}, {1, 0}, {2, time.Second}, {3, 2 * time.Second}, {4, 4 * time.Second}, {10, 256 * time.Second},
		{11, 5 * time.Minute}, {1000, 5 * time.Minute}} {
		if got := restartBackoff(tc.n); got != tc.want {
			t.Errorf("restartBackoff(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

// A restart waiting on its backoff ends when the kernel closes, and leaves
// the fiber free to restart again. Seen hanging (the guard fired) with the
// k.closed case removed from restart's wait.
func TestCloseEndsARestartsBackoff(t *testing.T) {
	k := New(Options{})
	f := &fiber{id: "agent.x", trust: TrustAgent, restarting: true}
	f.restarts.Store(9) // the next restart waits 256 s
	done := make(chan struct{})
	go func() {
		k.restart(f, 0, errors.New("stopped"), false)
		close(done)
	}()
	k.Close()
	select {
	case <-done:
	case <-time.After(time.Minute): // a guard against hanging, not a measurement
		t.Fatal("the restart still waits on its backoff after Close")
	}
	k.reg.RLock()
	defer k.reg.RUnlock()
	if f.restarting {
		t.Fatal("a restart Close ended left the fiber marked restarting")
	}
}
