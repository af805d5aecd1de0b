package automation

import (
	"context"
	"sync/atomic"

	"github.com/sms-baseline/sms/plugins/orm"
)

// job is one queued run.
type job struct {
	ctx    context.Context
	ev     Event
	writer orm.OpContext
}

// queue runs an agent plugin's automation apart from the writes that fire
// it: one worker, at most MaxQueue runs waiting, none once stopped.
type queue struct {
	ch     chan job
	ctx    context.Context
	cancel context.CancelFunc
	busy   atomic.Int64 // queued or running
}

func newQueue(run func(job)) *queue {
	ctx, cancel := context.WithCancel(context.Background())
	q := &queue{ch: make(chan job, MaxQueue), ctx: ctx, cancel: cancel}
	go func() {
		for {
			select {
			case <-ctx.Done():
				for {
					select {
					case <-q.ch:
						q.busy.Add(-1)
					default:
						return
					}
				}
			case j := <-q.ch:
				rctx, cancel := context.WithCancel(j.ctx)
				stop := context.AfterFunc(ctx, cancel)
				j.ctx = rctx
				run(j)
				stop()
				cancel()
				q.busy.Add(-1)
			}
		}
	}()
	return q
}

// push queues j, or reports false when the queue is full or stopped.
func (q *queue) push(j job) bool {
	if q.ctx.Err() != nil {
		return false
	}
	q.busy.Add(1)
	select {
	case q.ch <- j:
		return true
	default:
		q.busy.Add(-1)
		return false
	}
}

func (q *queue) stop() { q.cancel() }
