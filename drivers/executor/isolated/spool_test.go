package isolated_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// gateHost is a HostBridge whose first invoke waits until release is
// closed; it remembers the first function handed over.
type gateHost struct {
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	fn      string
}

func (h *gateHost) Get(context.Context, string) (json.RawMessage, error) { return nil, nil }

func (h *gateHost) Invoke(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
	first := false
	h.once.Do(func() { first = true })
	if first {
		<-h.release
	}
	return json.RawMessage(`"ok"`), nil
}

func (h *gateHost) Provide(context.Context, string, json.RawMessage) error { return nil }

func (h *gateHost) Contribute(_ context.Context, _ string, item json.RawMessage) (string, error) {
	var v struct {
		Handler struct {
			Fn string `json:"$fn"`
		} `json:"handler"`
	}
	_ = json.Unmarshal(item, &v)
	h.mu.Lock()
	h.fn = v.Handler.Fn
	h.mu.Unlock()
	return "c1", nil
}

func (h *gateHost) Log(context.Context, string, string) {}

// A child whose output nobody reads (no call is waiting) keeps reading its
// input, so the kernel's next large message goes through instead of both
// sides waiting on each other: here an abandoned call logs 400 KB after the
// kernel stopped waiting for it, then the kernel sends a 200 KB call. Seen
// failing (the child killed for not reading its input) with the child's
// output written by blocking writes on its one goroutine.
func TestChildReadsWhileItsOutputWaits(t *testing.T) {
	exec := newExecutor(t, isolated.Options{Runtime: goja.Options{Deadline: 300 * time.Millisecond}})
	code := []byte(`export default async function activate(cap) {
	await cap.contribute('tool', { name: 'slow', handler: async (arg) => {
		await cap.invoke('svc', 'slow');
		const line = 'x'.repeat(100000);
		for (let i = 0; i < 4; i++) cap.log(line);
		return arg.length;
	} });
}`)
	ctx := context.Background()
	u, err := exec.Load(ctx, kernel.Bundle{Manifest: kernel.Manifest{ID: "agent.spool"}, Code: code, CodeHash: kernel.HashCode(code)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = u.Close() }()
	host := &gateHost{release: make(chan struct{})}
	if err := u.Activate(ctx, host); err != nil {
		t.Fatal(err)
	}
	host.mu.Lock()
	fn := host.fn
	host.mu.Unlock()
	time.AfterFunc(time.Second, func() { close(host.release) })
	if _, err := u.Call(ctx, fn, json.RawMessage(`["a"]`)); err == nil {
		t.Fatal("the first call: got no error, want its deadline")
	}
	// Its JavaScript goes on with the answer and logs while nobody reads.
	time.Sleep(200 * time.Millisecond)
	big, _ := json.Marshal([]string{strings.Repeat("y", 200000)})
	out, err := u.Call(ctx, fn, big)
	if err != nil {
		t.Fatalf("a large call after output nobody read: %v", err)
	}
	if string(out) != "200000" {
		t.Errorf("answer: got %s, want 200000", out)
	}
}
