package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// router is a system plugin standing in for the HTTP routing table: it
// keeps the "route" point's items in the order they were added, takes
// removals late (Observer.LateRemove) and serves a request with the oldest
// route, as the table prefers the older of two equal routes.
type router struct {
	mu     sync.Mutex
	routes []kernel.Contribution
}

func (r *router) plugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: "router", Version: "1"},
		Activate: func(_ context.Context, c *kernel.Context) error {
			api := c.Kernel()
			if err := api.DefinePoint("route", kernel.PointMeta{Description: "a handler"}); err != nil {
				return err
			}
			return api.ObservePoint("route", kernel.Observer{
				Added: func(x kernel.Contribution) {
					r.mu.Lock()
					r.routes = append(r.routes, x)
					r.mu.Unlock()
				},
				Removed: func(x kernel.Contribution) {
					r.mu.Lock()
					r.routes = slices.DeleteFunc(r.routes, func(y kernel.Contribution) bool { return y.ID == x.ID })
					r.mu.Unlock()
				},
				LateRemove: true,
			})
		},
	}
}

// serve calls the oldest route's handler.
func (r *router) serve(ctx context.Context) (any, error) {
	r.mu.Lock()
	if len(r.routes) == 0 {
		r.mu.Unlock()
		return nil, fmt.Errorf("no route")
	}
	fn, _ := r.routes[0].Item.(map[string]any)["handler"].(kernel.Func)
	r.mu.Unlock()
	return fn(ctx)
}

// serveLater serves one request in the background and delivers its answer
// (or its error's text).
func (r *router) serveLater(ctx context.Context) <-chan any {
	out := make(chan any, 1)
	go func() {
		v, err := r.serve(ctx)
		if err != nil {
			v = err.Error()
		}
		out <- v
	}()
	return out
}

// transitionKernel returns a kernel with the router, a system key "config"
// and two versions of agent plugin "app": each contributes a route whose
// handler waits on gate (when it is not nil) and then answers its version
// and the config it reads through the bridge after the wait; entered hears
// of each v1 call that waits.
func transitionKernel(t *testing.T, entered, gate chan struct{}) (*kernel.Kernel, *kerneltest.Executor, *router) {
	t.Helper()
	k, exec := newKernel(t)
	r := &router{}
	if err := k.Install(r.plugin()); err != nil {
		t.Fatal(err)
	}
	if err := k.Install(provider("config", "config", "cfg")); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1", "v2", "v1-again"} {
		exec.Register(v, func(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
			handler := u.Func("h", func(ctx context.Context, _ []any) (any, error) {
				if gate != nil && v == "v1" {
					entered <- struct{}{}
					<-gate
				}
				raw, err := h.Get(ctx, "config")
				if err != nil {
					return nil, err
				}
				var cfg string
				_ = json.Unmarshal(raw, &cfg)
				return v + ":" + cfg, nil
			})
			_, err := h.Contribute(ctx, "route", kerneltest.JSON(map[string]any{"handler": handler}))
			return err
		})
	}
	exec.Register("broken", func(context.Context, kernel.HostBridge, *kerneltest.Unit) error {
		return fmt.Errorf("broken on purpose")
	})
	if err := k.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	return k, exec, r
}

var appManifest = kernel.Manifest{ID: "app", Version: "1", Inject: []string{"config"}, Points: []string{"route"}}

// propose stages version code of app without committing it.
func propose(t *testing.T, k *kernel.Kernel, version, code string) error {
	t.Helper()
	m := appManifest
	m.Version = version
	auth, err := k.Authorize(m, kernel.HashCode([]byte(code)))
	if err != nil {
		t.Fatal(err)
	}
	return k.Propose(context.Background(), kernel.Proposal{Manifest: m, Code: []byte(code), Auth: auth})
}

func waitPhase(t *testing.T, k *kernel.Kernel, id, phase string) kernel.TransitionView {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if v, ok := k.Transition(id); ok && v.Phase == phase {
			return v
		}
	}
	v, _ := k.Transition(id)
	t.Fatalf("transition of %s: %+v, want phase %s", id, v, phase)
	return v
}

func transitionEvents(t *testing.T, k *kernel.Kernel) []string {
	t.Helper()
	events, err := k.Events(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range events {
		if slices.Contains([]string{kernel.EventTransitionBegan, kernel.EventTransitionCompleted, kernel.EventTransitionAborted}, e.Type) {
			out = append(out, e.Type)
		}
	}
	return out
}

// A request running on v1 when v2 is proposed finishes on v1 (and may still
// read through the bridge); new requests go to v2; the transition
// completes, and v1's unit closes, once v2 is committed and the request has
// ended. Seen failing with the bridge's read for draining activations
// removed (the running request's read failed: "disposed"), and with
// activation.drainable not marking (nothing was counted in flight).
func TestTransitionDrainsTheOldVersion(t *testing.T) {
	ctx := context.Background()
	entered, gate := make(chan struct{}), make(chan struct{})
	k, exec, r := transitionKernel(t, entered, gate)
	if err := kerneltest.Agent(ctx, k, appManifest, "v1"); err != nil {
		t.Fatal(err)
	}
	first := r.serveLater(ctx)
	<-entered
	if err := propose(t, k, "2", "v2"); err != nil {
		t.Fatal(err)
	}
	v, _ := k.Transition("app")
	if v.Phase != kernel.PhaseTransitioning || !v.Switched || v.Committed || v.InFlight != 1 || v.FromVersion != "1" || v.ToVersion != "2" {
		t.Fatalf("transition = %+v, want transitioning, switched, 1 call in flight, 1 -> 2", v)
	}
	if out, err := r.serve(ctx); err != nil || out != "v2:cfg" {
		t.Fatalf("a new request answered %v, %v; want v2:cfg", out, err)
	}
	if err := k.Commit(ctx, "app", kernel.HashCode([]byte("v2"))); err != nil {
		t.Fatal(err)
	}
	if v, _ := k.Transition("app"); v.Phase != kernel.PhaseTransitioning || exec.Closed() != 0 {
		t.Fatalf("committed while a call runs on v1: %+v, closed units %d; want still transitioning, none closed", v, exec.Closed())
	}
	close(gate)
	if out := <-first; out != "v1:cfg" {
		t.Fatalf("the request running on v1 answered %v, want v1:cfg", out)
	}
	waitPhase(t, k, "app", kernel.PhaseComplete)
	if exec.Closed() != 1 {
		t.Fatalf("closed units = %d after the drain, want 1 (v1's)", exec.Closed())
	}
	got := transitionEvents(t, k)
	for deadline := time.Now().Add(10 * time.Second); len(got) < 2 && time.Now().Before(deadline); got = transitionEvents(t, k) {
		time.Sleep(time.Millisecond) // the completion is logged just after the phase changes
	}
	if !slices.Equal(got, []string{kernel.EventTransitionBegan, kernel.EventTransitionCompleted}) {
		t.Fatalf("transition events = %v", got)
	}
}

// Aborting a transition puts v1 back through v2's undo, and v1 serves new
// requests again; a v2 that fails to activate never takes a request: v1
// serves until the staged version is aborted. Seen failing with
// Observer.LateRemove ignored (the failed v2 left "no route"), and with the
// proxy's check for draining activations removed (v1's handler answered
// "belongs to a disposed plugin").
func TestTransitionAbort(t *testing.T) {
	ctx := context.Background()
	k, _, r := transitionKernel(t, nil, nil)
	if err := kerneltest.Agent(ctx, k, appManifest, "v1"); err != nil {
		t.Fatal(err)
	}
	if err := propose(t, k, "2", "v2"); err != nil {
		t.Fatal(err)
	}
	if out, err := r.serve(ctx); err != nil || out != "v2:cfg" {
		t.Fatalf("during the transition: %v, %v; want v2:cfg", out, err)
	}
	if _, err := k.AbortTransition(ctx, "app", "aborted by an admin"); err != nil {
		t.Fatal(err)
	}
	v := waitPhase(t, k, "app", kernel.PhaseAborted)
	if v.Reason != "aborted by an admin" {
		t.Fatalf("reason = %q", v.Reason)
	}
	if out, err := r.serve(ctx); err != nil || out != "v1:cfg" {
		t.Fatalf("after the abort: %v, %v; want v1:cfg", out, err)
	}
	wantCode(t, func() error { _, err := k.AbortTransition(ctx, "app", "again"); return err }(), kernel.CodeLifecycle)

	if err := propose(t, k, "3", "broken"); err == nil {
		t.Fatal("a broken version proposed without error")
	}
	if out, err := r.serve(ctx); err != nil || out != "v1:cfg" {
		t.Fatalf("with a failed staged version: %v, %v; want v1:cfg", out, err)
	}
	if _, err := k.Abort(ctx, "app", kernel.HashCode([]byte("broken")), "activation failed"); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, k, "app", kernel.PhaseAborted)
	if out, err := r.serve(ctx); err != nil || out != "v1:cfg" {
		t.Fatalf("after aborting the failed version: %v, %v; want v1:cfg", out, err)
	}
	want := []string{kernel.EventTransitionBegan, kernel.EventTransitionAborted, kernel.EventTransitionBegan, kernel.EventTransitionAborted}
	if got := transitionEvents(t, k); !slices.Equal(got, want) {
		t.Fatalf("transition events = %v, want %v", got, want)
	}
}

// At most kernel.MaxDraining replaced activations of one plugin drain at
// once: transitions past it close the oldest at once, so proposing
// versions quickly cannot keep units open without end. Seen failing with
// boundDrains not forcing the oldest (no unit closed within the grace).
func TestDrainsAreBounded(t *testing.T) {
	ctx := context.Background()
	exec := kerneltest.NewExecutor()
	k := kernel.New(kernel.Options{Executor: exec, DrainGrace: time.Hour})
	t.Cleanup(k.Close)
	m := kernel.Manifest{ID: "app", Version: "1"}
	const versions = kernel.MaxDraining + 3
	for i := range versions {
		code := fmt.Sprintf("v%d", i)
		exec.Register(code, func(context.Context, kernel.HostBridge, *kerneltest.Unit) error { return nil })
		m.Version = fmt.Sprint(i + 1)
		if err := kerneltest.Agent(ctx, k, m, code); err != nil {
			t.Fatal(err)
		}
	}
	want := versions - 1 - kernel.MaxDraining
	for deadline := time.Now().Add(10 * time.Second); exec.Closed() < want && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if got := exec.Closed(); got != want {
		t.Fatalf("closed units = %d, want %d: %d replaced, at most %d draining", got, want, versions-1, kernel.MaxDraining)
	}
}

// A committed version whose old version still drains is never recorded as
// aborted when the next version comes: its transition completes once the
// drain ends. Seen failing with beginTransition ending every open
// transition (transition_aborted "superseded by version 3" was logged).
func TestCommittedTransitionIsNotAborted(t *testing.T) {
	ctx := context.Background()
	exec := kerneltest.NewExecutor()
	k := kernel.New(kernel.Options{Executor: exec, DrainGrace: 50 * time.Millisecond})
	t.Cleanup(k.Close)
	m := kernel.Manifest{ID: "app", Version: "1"}
	for i, code := range []string{"a", "b", "c"} {
		exec.Register(code, func(context.Context, kernel.HostBridge, *kerneltest.Unit) error { return nil })
		m.Version = fmt.Sprint(i + 1)
		if err := kerneltest.Agent(ctx, k, m, code); err != nil {
			t.Fatal(err)
		}
	}
	got := transitionEvents(t, k)
	for deadline := time.Now().Add(10 * time.Second); len(got) < 4 && time.Now().Before(deadline); got = transitionEvents(t, k) {
		time.Sleep(time.Millisecond) // both drains end, and their completions are logged
	}
	slices.Sort(got) // the two drains end in either order
	want := []string{kernel.EventTransitionBegan, kernel.EventTransitionBegan, kernel.EventTransitionCompleted, kernel.EventTransitionCompleted}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("transition events = %v, want %v", got, want)
	}
}

// A call running on a dependent's replaced activation reads the keys as
// its version saw them: the provider's new value reaches only new work.
// Seen failing with readDeclared ignoring the snapshot (the running call
// read "two", the new provider's value).
func TestDrainingCallsReadTheKeysTheirVersionSaw(t *testing.T) {
	ctx := context.Background()
	k, exec := newKernel(t)
	r := &router{}
	if err := k.Install(r.plugin()); err != nil {
		t.Fatal(err)
	}
	entered, gate := make(chan struct{}), make(chan struct{})
	for _, v := range []string{"one", "two"} {
		exec.Register("prov-"+v, func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
			return h.Provide(ctx, "prov.cfg", kerneltest.JSON(v))
		})
	}
	calls := 0
	exec.Register("app", func(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
		handler := u.Func("h", func(ctx context.Context, _ []any) (any, error) {
			if calls++; calls == 1 {
				entered <- struct{}{}
				<-gate
			}
			raw, err := h.Get(ctx, "prov.cfg")
			var cfg string
			_ = json.Unmarshal(raw, &cfg)
			return cfg, err
		})
		_, err := h.Contribute(ctx, "route", kerneltest.JSON(map[string]any{"handler": handler}))
		return err
	})
	prov := kernel.Manifest{ID: "prov", Version: "1", Provide: []string{"prov.cfg"}}
	if err := kerneltest.Agent(ctx, k, prov, "prov-one"); err != nil {
		t.Fatal(err)
	}
	app := kernel.Manifest{ID: "app", Version: "1", Inject: []string{"prov.cfg"}, Points: []string{"route"}}
	if err := kerneltest.Agent(ctx, k, app, "app"); err != nil {
		t.Fatal(err)
	}
	first := r.serveLater(ctx)
	<-entered
	prov.Version = "2"
	if err := kerneltest.Agent(ctx, k, prov, "prov-two"); err != nil {
		t.Fatal(err)
	}
	if out, err := r.serve(ctx); err != nil || out != "two" {
		t.Fatalf("a new request read %v, %v; want two", out, err)
	}
	close(gate)
	if out := <-first; out != "one" {
		t.Fatalf("the call running on the replaced activation read %v, want one", out)
	}
}

// Closing the kernel closes the units of replaced versions at once, even
// under a call still running there, and uninstalling a plugin forgets its
// transition. Seen failing with Close not calling closeDrains (the
// replaced unit waited for its call), and with Uninstall keeping the
// transition.
func TestCloseEndsDrainsAndUninstallForgetsTransitions(t *testing.T) {
	ctx := context.Background()
	entered, gate := make(chan struct{}), make(chan struct{})
	k, exec, r := transitionKernel(t, entered, gate)
	defer close(gate)
	if err := kerneltest.Agent(ctx, k, appManifest, "v1"); err != nil {
		t.Fatal(err)
	}
	r.serveLater(ctx) // a call on v1 that runs until the test ends
	<-entered
	m := appManifest
	m.Version = "2"
	if err := kerneltest.Agent(ctx, k, m, "v2"); err != nil {
		t.Fatal(err)
	}
	if err := k.Uninstall(ctx, "app", false); err != nil {
		t.Fatal(err)
	}
	if v, ok := k.Transition("app"); ok {
		t.Fatalf("an uninstalled plugin still has a transition: %+v", v)
	}
	k.Close()
	for deadline := time.Now().Add(10 * time.Second); exec.Closed() < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if got := exec.Closed(); got != 2 {
		t.Fatalf("closed units = %d after Close, want 2 (v2's at the uninstall, v1's under its running call)", got)
	}
}
