package goja

import "time"

// workers runs host calls. A worker that finishes waits a while for the
// next call before it exits, so a busy unit reuses goroutines whose stacks
// have already grown to what a host call needs. A call never waits for a
// worker: when none is idle, a new one starts, so a host call that calls
// back into a unit can never be starved by the calls it waits on.
type workers struct {
	tasks chan func()
	idle  time.Duration
}

var hostWorkers = &workers{tasks: make(chan func()), idle: 10 * time.Second}

func (w *workers) run(task func()) {
	select {
	case w.tasks <- task: // an idle worker took it
	default:
		go w.work(task)
	}
}

func (w *workers) work(task func()) {
	timer := time.NewTimer(w.idle)
	defer timer.Stop()
	for {
		task()
		timer.Reset(w.idle)
		select {
		case task = <-w.tasks:
		case <-timer.C:
			return
		}
	}
}
