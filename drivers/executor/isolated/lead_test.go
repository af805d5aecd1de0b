package isolated_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/executortest"
	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// A request that reads the child's output itself still returns when its
// context ends, though the child says nothing (its JavaScript loops until a
// deadline far away). Seen failing, with a deadline error after 30 s, with
// the cancellation's interruption of the read removed from readFor.
func TestCancelInterruptsTheReader(t *testing.T) {
	exec := newExecutor(t, isolated.Options{Runtime: goja.Options{Deadline: 30 * time.Second}})
	env := executortest.NewEnv(t, exec)
	if err := mount(t, env.K, "agent.spin", `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'spin', handler: () => { for (;;) {} } });
}`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := tool(t, env.K, "spin")(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("call cancelled while the child loops: got %v, want %v", err, context.Canceled)
	}
}

// Many calls at once, each awaiting two host calls in turn, hand the lead
// from one waiting request to the next, serve host calls on the goroutine
// that waits for them and on workers, and all get their own answer. Run
// under -race in make test.
func TestConcurrentCallsShareTheReader(t *testing.T) {
	env := executortest.NewEnv(t, newExecutor(t, isolated.Options{}))
	m := kernel.Manifest{ID: "agent.twice", Version: "1", Inject: []string{executortest.KeyService}, Points: []string{"tool"}}
	code := `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'twice', handler: async (n) => {
		const a = await cap.invoke('svc', 'echo', n);
		const b = await cap.invoke('svc', 'echo', a.args[0] + 1);
		return b.args[0];
	} });
}`
	auth, err := env.K.Authorize(m, kernel.HashCode([]byte(code)))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.K.Propose(context.Background(), kernel.Proposal{Manifest: m, Code: []byte(code), Auth: auth}); err != nil {
		t.Fatal(err)
	}
	twice := tool(t, env.K, "twice")
	const callers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, callers*each)
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				n := float64(c*1000 + i)
				out, err := twice(context.Background(), n)
				if err != nil {
					errs <- err
					continue
				}
				if out != n+1 {
					errs <- fmt.Errorf("twice(%v): got %v, want %v", n, out, n+1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Calls that arrive together wait their turn in the child, which reads the
// next only between slices, so the last reply comes later than one call's
// wait (deadline plus twice the grace) after it was sent. A child that keeps
// answering is not frozen: every call gets its answer. Seen failing (the
// child killed as frozen) with the watchdog counting from each request's
// own send instead of from the child's last message.
func TestBusyChildIsNotFrozen(t *testing.T) {
	exec := newExecutor(t, isolated.Options{Runtime: goja.Options{Deadline: time.Second, Grace: 100 * time.Millisecond}})
	env := executortest.NewEnv(t, exec)
	if err := mount(t, env.K, "agent.busy", `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'busy', handler: () => { const end = Date.now() + 800; while (Date.now() < end) {} return 1; } });
}`); err != nil {
		t.Fatal(err)
	}
	busy := tool(t, env.K, "busy")
	const calls = 4 // replies at 0.8, 1.6, 2.4 and 3.2 s; the wait is 1.2 s
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Go(func() {
			if _, err := busy(context.Background()); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
