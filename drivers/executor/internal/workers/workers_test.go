package workers

import (
	"sync"
	"testing"
)

// Tasks that wait on each other all run: Go never queues a task behind a
// busy worker. Seen hanging with Go sending on tasks unconditionally.
func TestTasksThatWaitOnEachOtherRun(t *testing.T) {
	const n = 16
	var ready, done sync.WaitGroup
	ready.Add(n)
	done.Add(n)
	for range n {
		Go(func() {
			ready.Done()
			ready.Wait() // every task waits until all n are running at once
			done.Done()
		})
	}
	done.Wait()
}
