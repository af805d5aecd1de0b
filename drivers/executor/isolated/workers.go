package isolated

import "time"

// workers runs the goroutines of the protocol: the child's activations and
// calls, the parent's answers to host calls. An idle worker waits a while
// for the next task, so busy units reuse goroutines whose stacks have grown;
// a task never waits for a worker (a new one starts), so calls that wait on
// each other cannot starve.
type workers struct {
	tasks chan func()
	idle  time.Duration
}

var pool = &workers{tasks: make(chan func()), idle: 10 * time.Second}

func (w *workers) run(task func()) {
	select {
	case w.tasks <- task:
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
