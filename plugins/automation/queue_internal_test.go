package automation

import (
	"testing"
)

// TestQueueBound: one run in progress and MaxQueue waiting; the next is
// refused at once, and a stopped queue refuses everything. Seen failing
// with an unbuffered channel (the very first push was refused, the worker
// not yet waiting).
func TestQueueBound(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	q := newQueue(func(job) {
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
	})
	if !q.push(job{ctx: t.Context()}) {
		t.Fatal("the first push was refused")
	}
	<-started
	for i := range MaxQueue {
		if !q.push(job{ctx: t.Context()}) {
			t.Fatalf("push %d of %d was refused", i+1, MaxQueue)
		}
	}
	if q.push(job{ctx: t.Context()}) {
		t.Fatal("a push past the bound was accepted")
	}
	if n := q.busy.Load(); n != MaxQueue+1 {
		t.Fatalf("busy = %d, want %d", n, MaxQueue+1)
	}
	q.stop()
	close(release)
	if q.push(job{ctx: t.Context()}) {
		t.Fatal("a stopped queue accepted a run")
	}
}
