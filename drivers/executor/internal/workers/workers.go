// Package workers is the goroutine pool both executors run host calls and
// protocol tasks on. A worker that finishes waits a while for the next task
// before it exits, so a busy unit reuses goroutines whose stacks have
// already grown; a task never waits for a worker (a new one starts when
// none is idle), so tasks that wait on each other can never starve.
package workers

import "time"

// idle is how long a worker waits for another task before it exits.
const idle = 10 * time.Second

var tasks = make(chan func())

// Go runs task on an idle worker, or on a new one.
func Go(task func()) {
	select {
	case tasks <- task: // an idle worker took it
	default:
		go work(task)
	}
}

func work(task func()) {
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		task()
		timer.Reset(idle)
		select {
		case task = <-tasks:
		case <-timer.C:
			return
		}
	}
}
