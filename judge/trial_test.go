package judge_test

import (
	"context"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// trials records, for each Load, whether it was marked a trial.
type trials struct {
	kernel.Executor
	mu     sync.Mutex
	marked []bool
}

func (e *trials) Load(ctx context.Context, b kernel.Bundle) (kernel.Unit, error) {
	e.mu.Lock()
	e.marked = append(e.marked, kernel.IsTrial(ctx))
	e.mu.Unlock()
	return e.Executor.Load(ctx, b)
}

// The load gate's Load is marked a trial (so the isolated executor keeps
// its child for the mount) and the mount's is not. Seen failing with the
// gate loading without kernel.WithTrial.
func TestLoadGateLoadsATrial(t *testing.T) {
	exec := &trials{Executor: inProcess()}
	w := newWorld(t, exec, judge.Options{})
	v := w.submit(t, kernel.Manifest{ID: "agent.trial", Version: "1", Points: []string{"tool"}}, `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'trial', handler: async () => 'ok' });
}`)
	if v.Status != judge.StatusMounted {
		t.Fatalf("verdict %+v, want mounted", v)
	}
	exec.mu.Lock()
	defer exec.mu.Unlock()
	if len(exec.marked) != 2 || !exec.marked[0] || exec.marked[1] {
		t.Fatalf("loads marked a trial: %v, want [true false] (the gate's, then the mount's)", exec.marked)
	}
}
