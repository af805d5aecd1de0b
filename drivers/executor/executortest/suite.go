package executortest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/kernel"
)

// Config is what the suite asks of the executor it builds. The suite runs
// infinite loops, so a Factory must honour Deadline.
type Config struct {
	// Deadline bounds each activation and call.
	Deadline time.Duration
	// MaxCallStackSize bounds JavaScript call depth.
	MaxCallStackSize int
}

// Factory returns a fresh executor configured with cfg. It may register
// cleanups on t (closing child processes, for example).
type Factory func(t testing.TB, cfg Config) kernel.Executor

// The configurations the suite uses: a generous deadline for code that must
// succeed on a loaded machine, a short one for code that must not.
var (
	normal = Config{Deadline: 20 * time.Second, MaxCallStackSize: 256}
	short  = Config{Deadline: 300 * time.Millisecond, MaxCallStackSize: 256}
)

type testCase struct {
	name string
	run  func(t *testing.T, f Factory)
}

// Run runs the conformance suite against the executors factory builds. Each
// case is a subtest.
func Run(t *testing.T, factory Factory) {
	groups := [][]testCase{bridgeCases, hostContextCases, errorCases, limitCases, containmentCases, quarantineCases}
	for _, group := range groups {
		for _, c := range group {
			t.Run(c.name, func(t *testing.T) { c.run(t, factory) })
		}
	}
}

// mount authorizes and proposes an agent plugin.
func mount(ctx context.Context, k *kernel.Kernel, m kernel.Manifest, code string) error {
	auth, err := k.Authorize(m, kernel.HashCode([]byte(code)))
	if err != nil {
		return err
	}
	return k.Propose(ctx, kernel.Proposal{Manifest: m, Code: []byte(code), Auth: auth})
}

func mustMount(t testing.TB, k *kernel.Kernel, m kernel.Manifest, code string) {
	t.Helper()
	if err := mount(context.Background(), k, m, code); err != nil {
		t.Fatalf("mount %s: %v", m.ID, err)
	}
}

// tool returns the handler of the tool contribution with the given name.
func tool(t testing.TB, k *kernel.Kernel, name string) kernel.Func {
	t.Helper()
	for _, c := range k.Contributions(PointTool) {
		item, ok := c.Item.(map[string]any)
		if !ok || item["name"] != name {
			continue
		}
		fn, ok := item["handler"].(kernel.Func)
		if !ok {
			t.Fatalf("tool %s has handler %T, want kernel.Func", name, item["handler"])
		}
		return fn
	}
	t.Fatalf("no tool named %s was contributed", name)
	return nil
}

// call calls fn with args and fails the test on error.
func call(t testing.TB, fn kernel.Func, args ...any) any {
	t.Helper()
	out, err := fn(context.Background(), args...)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	return out
}

// wantErr fails unless err is non-nil and its message contains every part.
func wantErr(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

// wantEqual fails unless got and want print the same.
func wantEqual(t testing.TB, what string, got, want any) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// wantState fails unless the fiber is in state want.
func wantState(t testing.TB, k *kernel.Kernel, id string, want kernel.State) {
	t.Helper()
	v, ok := k.Fiber(id)
	if !ok {
		t.Fatalf("fiber %s not found", id)
	}
	if v.State != want {
		t.Fatalf("fiber %s state = %s, want %s (error: %s)", id, v.State, want, v.Error)
	}
}

// agent returns a manifest for an agent plugin with the given id.
// agent returns a manifest declaring the tool point, which most cases use.
func agent(id string) kernel.Manifest {
	return kernel.Manifest{ID: id, Version: "1", Points: []string{PointTool}}
}

// toolPlugin wraps handler (a JavaScript function expression) into code that
// contributes it as the tool name.
func toolPlugin(name, handler string) string {
	return `export default async function activate(cap) {
	await cap.contribute('tool', { name: '` + name + `', handler: ` + handler + ` });
}`
}

// errorsIsCanceled reports whether err is, or says it is, a cancellation:
// an executor whose errors cross a process boundary keeps only the text.
func errorsIsCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || err != nil && strings.Contains(err.Error(), context.Canceled.Error())
}
