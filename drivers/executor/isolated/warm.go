package isolated

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/kernel"
)

// A child of the warm pool warms up before it counts as ready: it loads,
// activates and calls a fixed module of its own, against a host of its
// own, and throws it away. A fresh process pays for its first run of
// JavaScript in page faults (the runtime's code and a heap still to be
// mapped): on a slow virtual machine a Load in a cold child took 4 to 7 ms,
// in a warmed one about 1 ms. Nothing of the warm-up outlives it: the
// module and its runtime are closed before the child reads a plugin's
// code, and the child's limits apply to it as to everything else.

// warmTimeout bounds a child's warm-up; a child that does not answer in
// time is closed instead of put in the pool.
const warmTimeout = 10 * time.Second

// warmCode exercises what every plugin does: an activation that
// contributes a handler, a host call it awaits, and a call of the handler.
const warmCode = `export default async function activate(cap) {
	const echoed = await cap.invoke('warm', 'echo', { n: 1, s: 'x', a: [1, 2] });
	await cap.contribute('warm', { name: 'warm', handler: async (input) => ({ echoed, input }) });
}`

// warmUp has a pool child warm up and waits for its answer; a child that
// fails to is closed.
func (u *unit) warmUp() error {
	ctx, cancel := context.WithTimeout(context.Background(), warmTimeout)
	defer cancel()
	if _, err := u.request(ctx, message{Op: opWarm}); err != nil {
		_ = u.Close()
		return err
	}
	return nil
}

// warm runs warmCode once and closes it.
func (c *child) warm(ctx context.Context) error {
	code := []byte(warmCode)
	u, err := goja.New(goja.Options{Deadline: warmTimeout, Driven: true}).Load(ctx,
		kernel.Bundle{Manifest: kernel.Manifest{ID: "sandbox.warm"}, Code: code, CodeHash: kernel.HashCode(code)})
	if err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	defer func() { _ = u.Close() }()
	run, ok := u.(goja.Starter)
	if !ok {
		return fmt.Errorf("warm up: the runtime's unit %T cannot be driven", u)
	}
	host := &warmHost{}
	activated := errWarmUnfinished
	run.StartActivate(ctx, host, func(err error) { activated = err })
	run.Drive()
	if activated != nil {
		return fmt.Errorf("warm up: activate: %w", activated)
	}
	called := errWarmUnfinished
	run.StartCall(ctx, host.handler, json.RawMessage(`[{"q":1}]`), func(_ json.RawMessage, err error) { called = err })
	run.Drive()
	if called != nil {
		return fmt.Errorf("warm up: call: %w", called)
	}
	return nil
}

var errWarmUnfinished = errors.New("did not finish")

// warmHost answers the warm-up module at once, on the child's goroutine.
type warmHost struct {
	handler string // the function id of the contributed handler
}

var _ goja.AsyncHost = (*warmHost)(nil)

// StartHost implements goja.AsyncHost.
func (h *warmHost) StartHost(_ context.Context, call goja.HostCall, done func(json.RawMessage, error)) {
	switch call.Op {
	case "invoke":
		done(call.Data, nil)
	case "contribute":
		var item struct {
			Handler struct {
				Fn string `json:"$fn"`
			} `json:"handler"`
		}
		err := json.Unmarshal(call.Data, &item)
		h.handler = item.Handler.Fn
		done(json.RawMessage(`"1"`), err)
	default:
		done(nil, fmt.Errorf("the warm-up makes no %s call", call.Op))
	}
}

func (h *warmHost) Get(context.Context, string) (json.RawMessage, error) {
	return nil, errors.New("the warm-up gets nothing")
}

func (h *warmHost) Invoke(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("the warm-up host answers through StartHost")
}

func (h *warmHost) Provide(context.Context, string, json.RawMessage) error {
	return errors.New("the warm-up provides nothing")
}

func (h *warmHost) Contribute(context.Context, string, json.RawMessage) (string, error) {
	return "", errors.New("the warm-up host answers through StartHost")
}

func (h *warmHost) Log(context.Context, string, string) {}
