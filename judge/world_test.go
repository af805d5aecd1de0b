package judge_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/executortest"
	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// TestMain lets this test binary be the isolated executor's child.
func TestMain(m *testing.M) {
	isolated.ServeChildIf("SMS_JUDGE_TEST_CHILD")
	os.Exit(m.Run())
}

func inProcess() kernel.Executor { return goja.New(goja.Options{Deadline: 10 * time.Second}) }

func inChild(t testing.TB) kernel.Executor { return childExecutor(t, 0) }

// childExecutor is the isolated executor with this test binary as its
// child, keeping warm children started ahead of need.
func childExecutor(t testing.TB, warm int) *isolated.Executor {
	exec, err := isolated.New(isolated.Options{Command: []string{os.Args[0]}, Env: []string{"SMS_JUDGE_TEST_CHILD=1"}, Warm: warm})
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

// routes is a system plugin defining a sensitive point agents may use.
var routes = kernel.Plugin{
	Manifest: kernel.Manifest{ID: "sys.http", Version: "1"},
	Activate: func(_ context.Context, c *kernel.Context) error {
		return c.Kernel().DefinePoint("route", kernel.PointMeta{Description: "{method, path, handler}"})
	},
}

type world struct {
	k     *kernel.Kernel
	judge judge.Service
	env   *executortest.Env
}

// newWorld returns a kernel with the executortest host plugin, a route
// point, the judge (and plugins, installed after it), settled.
func newWorld(t testing.TB, exec kernel.Executor, opts judge.Options, plugins ...kernel.Plugin) *world {
	t.Helper()
	env := executortest.NewEnv(t, exec)
	if opts.Executor == nil {
		opts.Executor = exec
	}
	j := judge.New(opts)
	for _, p := range append([]kernel.Plugin{routes, j.Plugin()}, plugins...) {
		if err := env.K.Install(p); err != nil {
			t.Fatal(err)
		}
	}
	// A plugin failing to activate is some tests' point; the judge must not.
	_ = env.K.Settle(context.Background())
	v, err := env.K.GetValue(judge.Key)
	if err != nil {
		t.Fatal(err)
	}
	return &world{k: env.K, judge: v.(judge.Service), env: env}
}

func (w *world) submit(t testing.TB, m kernel.Manifest, code string) judge.Verdict {
	t.Helper()
	v, err := w.judge.Submit(context.Background(), m, code, "tester")
	if err != nil {
		t.Fatalf("submit %s: %v", m.ID, err)
	}
	return v
}

// expect is what a verdict should say: its status and gate, and a part of
// its reason.
type expect struct {
	status judge.Status
	gate   string
	reason string
}

// wantVerdict fails unless v matches want.
func wantVerdict(t testing.TB, v judge.Verdict, want expect) {
	t.Helper()
	if v.Status != want.status || v.Gate != want.gate || !strings.Contains(v.Reason, want.reason) {
		t.Fatalf("verdict = %+v, want status %s, gate %s, reason containing %q", v, want.status, want.gate, want.reason)
	}
}

// manifest declares the tool point, which toolCode contributes to.
func manifest(id string) kernel.Manifest {
	return kernel.Manifest{ID: id, Version: "1", Points: []string{"tool"}}
}

// toolCode contributes a tool that answers answer.
func toolCode(answer string) string {
	return `export default async function activate(cap) {
	await cap.contribute('tool', { name: 't', handler: () => '` + answer + `' });
}`
}

// eventTypes returns the judge/* event types the log holds for plugin.
func eventTypes(t testing.TB, k *kernel.Kernel, plugin string) []string {
	t.Helper()
	events, err := k.Events(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range events {
		if e.Plugin == plugin && strings.HasPrefix(e.Type, "judge/") {
			out = append(out, e.Type)
		}
	}
	return out
}
