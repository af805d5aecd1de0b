package judge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// A plugin whose activation submits another plugin to the judge (here a
// system plugin waiting for a key an agent plugin provides) gets a clear
// error at once instead of deadlocking the judge's mount that activates
// it. Seen hanging (the judge's mount held its lock while the activation
// waited for it) with begin's InOperation check removed.
func TestSubmissionFromAnActivationFails(t *testing.T) {
	got := make(chan error, 1)
	reactor := kernel.Plugin{
		Manifest: kernel.Manifest{ID: "sys.reactor", Version: "1", Inject: []string{"svc.agent", judge.Key}},
		Activate: func(ctx context.Context, c *kernel.Context) error {
			v, err := c.Get(judge.Key)
			if err != nil {
				return err
			}
			_, err = v.(judge.Service).Submit(ctx, manifest("agent.inner"), toolCode("inner"), "sys.reactor")
			got <- err
			return nil
		},
	}
	w := newWorld(t, inProcess(), judge.Options{}, reactor)
	m := kernel.Manifest{ID: "agent.provider", Version: "1", Provide: []string{"svc.agent"}}
	done := make(chan judge.Verdict, 1)
	go func() {
		done <- w.submit(t, m, `export default async function activate(cap) { await cap.provide('svc.agent', { ok: true }); }`)
	}()
	select {
	case v := <-done:
		wantVerdict(t, v, expect{status: judge.StatusMounted, gate: judge.GateMount})
	case <-time.After(20 * time.Second):
		t.Fatal("the submission that activates sys.reactor never finished: the judge deadlocked")
	}
	err := <-got
	if kernel.CodeOf(err) != kernel.CodeLifecycle || !strings.Contains(err.Error(), "from inside a plugin's activation") {
		t.Fatalf("inner submission error = %v, want CodeLifecycle naming the activation", err)
	}
	if _, ok := w.k.Fiber("agent.inner"); ok {
		t.Fatal("the inner submission mounted agent.inner")
	}
}
