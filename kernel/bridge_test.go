package kernel_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

type counter struct{ n float64 }

func (c *counter) Invoke(_ context.Context, method string, args []any) (any, error) {
	if method != "add" {
		return nil, &kernel.Error{Code: kernel.CodeNotFound, Message: "no method " + method}
	}
	c.n += args[0].(float64)
	return map[string]any{"total": c.n}, nil
}

// Functions an agent plugin hands over become host-callable Funcs that stop
// working the instant the fiber is disposed, and its unit is closed.
// Seen failing with the liveness check removed from proxy.
func TestAgentFunctionsDieWithFiber(t *testing.T) {
	ctx := context.Background()
	k, exec := newKernel(t)
	if err := k.DefinePoint("tool", kernel.PointMeta{}); err != nil {
		t.Fatal(err)
	}
	exec.Register("tools", func(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
		handler := u.Func("f1", func(_ context.Context, args []any) (any, error) {
			return map[string]any{"echo": args[0]}, nil
		})
		_, err := h.Contribute(ctx, "tool", kerneltest.JSON(map[string]any{"name": "echo", "handler": handler}))
		return err
	})
	if err := kerneltest.Agent(ctx, k, kernel.Manifest{ID: "agent.tools", Version: "1", Points: []string{"tool"}}, "tools"); err != nil {
		t.Fatal(err)
	}
	item := k.Contributions("tool")[0].Item.(map[string]any)
	fn, ok := item["handler"].(kernel.Func)
	if !ok {
		t.Fatalf("handler is %T, want kernel.Func", item["handler"])
	}
	out, err := fn(ctx, "hi")
	if err != nil || out.(map[string]any)["echo"] != "hi" {
		t.Fatalf("call = %v, %v; want echo hi", out, err)
	}
	if err := k.Disable(ctx, "agent.tools"); err != nil {
		t.Fatal(err)
	}
	_, err = fn(ctx, "again")
	wantCode(t, err, kernel.CodeLifecycle)
	if exec.Closed() != 1 {
		t.Fatalf("units closed = %d, want 1", exec.Closed())
	}
}

// Agent code reads and invokes declared keys through JSON snapshots; values
// over the size or depth limit are refused. Seen failing with checkSnapshot
// returning nil.
func TestBridgeSnapshots(t *testing.T) {
	ctx := context.Background()
	k, exec := newKernel(t)
	svc := &counter{}
	mustInstall(t, k, provider("sys.counter", "counter", svc))
	var got []string
	exec.Register("use", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		out, err := h.Invoke(ctx, "counter", "add", kerneltest.JSON([]any{2}))
		if err != nil {
			return err
		}
		got = append(got, string(out))
		deep := strings.Repeat("[", kernel.MaxSnapshotDepth+1) + strings.Repeat("]", kernel.MaxSnapshotDepth+1)
		got = append(got, string(kernel.CodeOf(h.Provide(ctx, "agent.v", json.RawMessage(deep)))))
		big := kerneltest.JSON(strings.Repeat("x", kernel.MaxSnapshotBytes))
		got = append(got, string(kernel.CodeOf(h.Provide(ctx, "agent.v", big))))
		_, err = h.Invoke(ctx, "counter", "nope", nil)
		got = append(got, string(kernel.CodeOf(err)))
		h.Log(ctx, "info", "done")
		return h.Provide(ctx, "agent.v", kerneltest.JSON(map[string]any{"ok": true}))
	})
	m := kernel.Manifest{ID: "agent.use", Version: "1", Inject: []string{"counter"}, Provide: []string{"agent.v"}}
	if err := kerneltest.Agent(ctx, k, m, "use"); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"total":2}`, "VALIDATION", "VALIDATION", "NOT_FOUND"}
	if !equal(got, want) {
		t.Fatalf("bridge results = %v, want %v", got, want)
	}
	if svc.n != 2 {
		t.Fatalf("service total = %v, want 2", svc.n)
	}
}

func TestSnapshotDecode(t *testing.T) {
	cases := []struct {
		in      string
		wantErr string
	}{
		{`{"a":[1,"[[[["]}`, ""},
		{`{"a":1} {"b":2}`, "trailing data"},
		{`{"a":`, "invalid JSON"},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), "nesting deeper"},
	}
	for _, tc := range cases {
		_, err := kernel.Decode(json.RawMessage(tc.in))
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("Decode(%.20s) error = %v, want %q", tc.in, err, tc.wantErr)
		}
	}
	raw, err := kernel.Snapshot(map[string]any{"f": kernel.Func(nil)})
	if err != nil || string(raw) != `{"f":null}` {
		t.Fatalf("Snapshot(func) = %s, %v; want {\"f\":null}", raw, err)
	}
}

// Without an executor, agent fibers fail with a clear error.
func TestAgentWithoutExecutor(t *testing.T) {
	k := kernel.New(kernel.Options{})
	err := kerneltest.Agent(context.Background(), k, kernel.Manifest{ID: "agent.a", Version: "1"}, "x")
	wantCode(t, err, kernel.CodeActivation)
	if !strings.Contains(err.Error(), "no executor") {
		t.Fatalf("error %q does not say the executor is missing", err)
	}
}
