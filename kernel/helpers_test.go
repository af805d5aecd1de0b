package kernel_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// recorder collects strings from callbacks in order.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

func newKernel(t testing.TB) (*kernel.Kernel, *kerneltest.Executor) {
	t.Helper()
	exec := kerneltest.NewExecutor()
	return kernel.New(kernel.Options{Name: "test", Executor: exec, DrainGrace: time.Millisecond}), exec
}

// provider returns a system plugin that provides key with value.
func provider(id, key string, value any, inject ...string) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: id, Version: "1", Provide: []string{key}, Inject: inject},
		Activate: func(_ context.Context, c *kernel.Context) error { return c.Provide(key, value) },
	}
}

func mustInstall(t testing.TB, k *kernel.Kernel, plugins ...kernel.Plugin) {
	t.Helper()
	for _, p := range plugins {
		if err := k.Install(p); err != nil {
			t.Fatalf("install %s: %v", p.Manifest.ID, err)
		}
	}
}

func mustSettle(t testing.TB, k *kernel.Kernel) {
	t.Helper()
	if err := k.Settle(context.Background()); err != nil {
		t.Fatalf("settle: %v", err)
	}
}

func stateOf(t testing.TB, k *kernel.Kernel, id string) kernel.State {
	t.Helper()
	v, ok := k.Fiber(id)
	if !ok {
		t.Fatalf("fiber %s not found", id)
	}
	return v.State
}

func wantState(t testing.TB, k *kernel.Kernel, id string, want kernel.State) {
	t.Helper()
	if got := stateOf(t, k, id); got != want {
		v, _ := k.Fiber(id)
		t.Fatalf("fiber %s state = %s, want %s (error: %s)", id, got, want, v.Error)
	}
}

func wantCode(t testing.TB, err error, want kernel.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want code %s", want)
	}
	if got := kernel.CodeOf(err); got != want {
		t.Fatalf("error code = %q, want %q (error: %v)", got, want, err)
	}
	if !errors.Is(err, &kernel.Error{Code: want}) {
		t.Fatalf("errors.Is(err, code %s) = false for %v", want, err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
