package isolated_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/executortest"
	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// mount proposes an agent plugin with the tool point that injects the
// suite's service and config.
func mount(t *testing.T, k *kernel.Kernel, id, code string) error {
	t.Helper()
	m := kernel.Manifest{ID: id, Version: "1", Points: []string{"tool"},
		Inject: []string{executortest.KeyService, executortest.KeyConfig}}
	auth, err := k.Authorize(m, kernel.HashCode([]byte(code)))
	if err != nil {
		t.Fatal(err)
	}
	return k.Propose(context.Background(), kernel.Proposal{Manifest: m, Code: []byte(code), Auth: auth})
}

func tool(t *testing.T, k *kernel.Kernel, name string) kernel.Func {
	t.Helper()
	for _, c := range k.Contributions(executortest.PointTool) {
		if item := c.Item.(map[string]any); item["name"] == name {
			return item["handler"].(kernel.Func)
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func wantErr(t *testing.T, err error, parts ...string) {
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

// Allocating without bound ends that plugin's child with a clear error,
// in activation or in a call; the kernel and its other plugins keep
// serving, and the dead plugin's later calls say why it is gone. The
// errors are kernel.ErrUnitStopped, which quarantines a committed plugin.
// Seen failing with the RLIMIT_AS Setrlimit removed from applyLimits, and
// (not ErrUnitStopped) with watch's kernel.Stopped removed.
func TestMemoryBombFailsOnlyThatPlugin(t *testing.T) {
	exec := newExecutor(t, isolated.Options{MemoryLimit: 256 << 20, Runtime: goja.Options{Deadline: 20 * time.Second}})
	env := executortest.NewEnv(t, exec)
	err := mount(t, env.K, "agent.array", `export default async function activate(cap) {
	const a = [];
	for (let i = 0; i < 4e6; i++) a.push({ n: i }); // far more than 256 MiB
}`)
	wantErr(t, err, "sandbox process exited", "out of memory")
	if v, _ := env.K.Fiber("agent.array"); v.State != kernel.StateFailed {
		t.Fatalf("fiber state = %s, want failed", v.State)
	}
	if err := mount(t, env.K, "agent.calm", `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'calm', handler: () => 'calm' });
}`); err != nil {
		t.Fatal(err)
	}
	if err := mount(t, env.K, "agent.bomb", `export default async function activate(cap) {
	await cap.contribute('tool', { name: 'bomb', handler: () => 'x'.repeat(2 ** 29).length });
	await cap.contribute('tool', { name: 'after', handler: () => 'after' });
}`); err != nil {
		t.Fatal(err)
	}
	_, err = tool(t, env.K, "bomb")(context.Background())
	wantErr(t, err, "sandbox process exited", "out of memory")
	if !errors.Is(err, kernel.ErrUnitStopped) {
		t.Fatalf("the crashed call's error %v is not kernel.ErrUnitStopped", err)
	}
	_, err = tool(t, env.K, "after")(context.Background())
	wantErr(t, err, "sandbox process exited")
	if !errors.Is(err, kernel.ErrUnitStopped) {
		t.Fatalf("a later call's error %v is not kernel.ErrUnitStopped", err)
	}
	if out, err := tool(t, env.K, "calm")(context.Background()); err != nil || out != "calm" {
		t.Fatalf("other plugin = %v, %v; want calm", out, err)
	}
}

// loadDirect loads and activates code on exec with a bridge, no kernel.
func loadDirect(t *testing.T, exec kernel.Executor, code string) (kernel.Unit, error) {
	t.Helper()
	u, err := exec.Load(context.Background(), kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.limits"}, Code: []byte(code)})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = u.Close() })
	return u, u.Activate(context.Background(), executortest.NewBridge())
}

// catastrophic backtracks in a regular expression: it runs inside a Go
// built-in, which goja cannot interrupt.
const catastrophic = `/(?=(a+)+b)/.test('a'.repeat(27))`

// A child that spends its CPU time limit is ended by RLIMIT_CPU, and says so.
// Seen failing with the RLIMIT_CPU Setrlimit removed from applyLimits (the
// child then ran until its deadline and grace instead).
func TestCPULimitEndsTheChild(t *testing.T) {
	exec := newExecutor(t, isolated.Options{CPULimit: time.Second, Runtime: goja.Options{Deadline: 20 * time.Second, Grace: 5 * time.Second}})
	_, err := loadDirect(t, exec, `export default async function activate(cap) { `+catastrophic+`; }`)
	wantErr(t, err, "sandbox process exited", "CPU time limit of 1s was reached")
}

// A child whose JavaScript keeps running a built-in past its deadline and
// grace ends itself; later calls say why.
// Seen failing with the OnStuck exit removed from the child's load.
func TestStuckChildExits(t *testing.T) {
	// The deadline leaves a loaded machine time to start the child.
	exec := newExecutor(t, isolated.Options{Runtime: goja.Options{Deadline: 500 * time.Millisecond, Grace: 250 * time.Millisecond}})
	u, err := loadDirect(t, exec, `export default async function activate(cap) {
	await cap.provide('stuck', () => `+catastrophic+`);
	await cap.provide('ok', () => 'ok');
}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = u.Call(context.Background(), "f1", json.RawMessage(`[]`))
	wantErr(t, err, "deadline")
	// The child exits a grace period after the deadline; until then a call
	// times out. Each attempt is bounded by the deadline.
	for range 100 {
		_, err = u.Call(context.Background(), "f2", json.RawMessage(`[]`))
		if err != nil && strings.Contains(err.Error(), "sandbox process exited") {
			wantErr(t, err, "kept running a built-in past its deadline")
			return
		}
	}
	t.Fatalf("last error = %v, want the child to have exited", err)
}

// A child that never answers is killed once its deadline and twice the grace
// have passed. Seen failing with the timer case removed from await.
func TestFrozenChildIsKilled(t *testing.T) {
	exec, err := isolated.New(isolated.Options{Command: []string{"sleep", "60"}, Runtime: goja.Options{Deadline: 100 * time.Millisecond, Grace: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a guard against hanging
	defer cancel()
	_, err = exec.Load(ctx, kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.frozen"}, Code: []byte("x")})
	wantErr(t, err, "did not answer within 200ms and was killed")
}

// A child that writes something other than the protocol is killed, and the
// error says so.
func TestProtocolErrorKillsTheChild(t *testing.T) {
	exec, err := isolated.New(isolated.Options{Command: []string{"/bin/sh", "-c", "echo not-json; sleep 60"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = exec.Load(context.Background(), kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.noise"}, Code: []byte("x")})
	wantErr(t, err, "sandbox process broke the protocol and was killed")
}

// The child starts with its limits and Options.Env, and nothing of the
// parent's environment. Seen failing with cmd.Env built from os.Environ().
func TestChildInheritsNoEnvironment(t *testing.T) {
	t.Setenv("SMS_TEST_PARENT_SECRET", "hunter2")
	logs := &executortest.LogCapture{}
	exec, err := isolated.New(isolated.Options{Command: []string{"/bin/sh", "-c", "env >&2; exit 1"},
		Env: []string{"EXTRA=1"}, Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = exec.Load(context.Background(), kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.env"}, Code: []byte("x")})
	wantErr(t, err, "sandbox process exited")
	all := strings.Join(logs.Records(), "\n")
	for _, want := range []string{isolated.EnvMemoryLimit + "=", isolated.EnvCPULimit + "=", "EXTRA=1"} {
		if !strings.Contains(all, want) {
			t.Errorf("child environment %q lacks %s", all, want)
		}
	}
	if strings.Contains(all, "hunter2") {
		t.Errorf("child environment %q contains the parent's secret", all)
	}
}
