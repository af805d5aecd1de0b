package isolated

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/sms-baseline/sms/kernel"
)

// maxRecordBytes bounds what one plugin's record of its first activation
// holds (the arguments and answers of its host calls). A plugin whose
// record would pass it keeps its child while it is mounted.
const maxRecordBytes = 256 << 10

// hostCall is one host call an activation made, and the kernel's answer.
type hostCall struct {
	op, key, method string
	args            json.RawMessage // Invoke's arguments, Provide's value, Contribute's item
	data            json.RawMessage // Get's and Invoke's answer
	text            string          // Contribute's answer
	err             error
}

func (c hostCall) same(op, key, method string, args json.RawMessage) bool {
	return c.op == op && c.key == key && c.method == method && bytes.Equal(c.args, args)
}

func (c hostCall) String() string {
	if c.method != "" {
		return c.op + " " + c.key + "." + c.method
	}
	return c.op + " " + c.key
}

// record is the first activation's host calls, in the order they were
// made.
type record struct {
	calls  []hostCall
	size   int
	tooBig bool
}

// replayable reports whether the plugin may sleep: there is a record (its
// first activation settled) and it is whole.
func (r *record) replayable() bool { return r != nil && !r.tooBig }

func (r *record) add(c hostCall) {
	if r.tooBig {
		return
	}
	r.size += len(c.key) + len(c.method) + len(c.args) + len(c.data) + len(c.text) + 64
	if r.size > maxRecordBytes {
		r.calls, r.tooBig = nil, true
		return
	}
	r.calls = append(r.calls, c)
}

// recorder is the host bridge of a plugin's first child: it passes every
// call to the kernel and records those of the activation.
type recorder struct {
	host kernel.HostBridge
	mu   sync.Mutex
	rec  *record
}

func newRecorder(host kernel.HostBridge) *recorder {
	return &recorder{host: host, rec: &record{}}
}

func (r *recorder) add(c hostCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec != nil {
		r.rec.add(c)
	}
}

// finish ends the recording and returns it; later calls only pass.
func (r *recorder) finish() *record {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.rec
	r.rec = nil
	return rec
}

func (r *recorder) Get(ctx context.Context, key string) (json.RawMessage, error) {
	data, err := r.host.Get(ctx, key)
	r.add(hostCall{op: opGet, key: key, data: data, err: err})
	return data, err
}

func (r *recorder) Invoke(ctx context.Context, key, method string, args json.RawMessage) (json.RawMessage, error) {
	data, err := r.host.Invoke(ctx, key, method, args)
	r.add(hostCall{op: opInvoke, key: key, method: method, args: args, data: data, err: err})
	return data, err
}

func (r *recorder) Provide(ctx context.Context, key string, value json.RawMessage) error {
	err := r.host.Provide(ctx, key, value)
	r.add(hostCall{op: opProvide, key: key, args: value, err: err})
	return err
}

func (r *recorder) Contribute(ctx context.Context, point string, item json.RawMessage) (string, error) {
	id, err := r.host.Contribute(ctx, point, item)
	r.add(hostCall{op: opContribute, key: point, args: item, text: id, err: err})
	return id, err
}

func (r *recorder) Log(ctx context.Context, level, msg string) { r.host.Log(ctx, level, msg) }

// replay is the host bridge of a woken child. While its activation runs,
// each host call is matched with an unused call of the record that has the
// same operation and arguments, and gets that call's answer; nothing
// reaches the kernel, so nothing is provided, contributed or invoked
// twice. Matching ignores order, since concurrent host calls may be made
// in another order. A call the record lacks is refused and fails the
// wake; afterwards every call passes to the kernel.
type replay struct {
	host kernel.HostBridge
	rec  *record

	mu       sync.Mutex
	used     []bool
	done     bool
	diverged error
}

func newReplay(host kernel.HostBridge, rec *record) *replay {
	return &replay{host: host, rec: rec, used: make([]bool, len(rec.calls))}
}

// answer returns the recorded call matching this one, or passes (true)
// once the activation has finished.
func (r *replay) answer(op, key, method string, args json.RawMessage) (hostCall, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return hostCall{}, true, nil
	}
	for i, c := range r.rec.calls {
		if !r.used[i] && c.same(op, key, method, args) {
			r.used[i] = true
			return c, false, nil
		}
	}
	asked := hostCall{op: op, key: key, method: method}
	err := fmt.Errorf("activate asked %s, which its first activation did not ask with these arguments "+
		"(a plugin's activation must make the same host calls each time it runs)", asked)
	if r.diverged == nil {
		r.diverged = err
	}
	return hostCall{}, false, err
}

// finish ends the replay: it fails if the activation asked anything the
// record lacks, or left out anything the record has.
func (r *replay) finish() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	if r.diverged != nil {
		return r.diverged
	}
	for i, c := range r.rec.calls {
		if !r.used[i] {
			return fmt.Errorf("activate did not ask %s as its first activation did "+
				"(a plugin's activation must make the same host calls each time it runs)", c)
		}
	}
	return nil
}

func (r *replay) Get(ctx context.Context, key string) (json.RawMessage, error) {
	c, pass, err := r.answer(opGet, key, "", nil)
	if pass {
		return r.host.Get(ctx, key)
	}
	if err != nil {
		return nil, err
	}
	return c.data, c.err
}

func (r *replay) Invoke(ctx context.Context, key, method string, args json.RawMessage) (json.RawMessage, error) {
	c, pass, err := r.answer(opInvoke, key, method, args)
	if pass {
		return r.host.Invoke(ctx, key, method, args)
	}
	if err != nil {
		return nil, err
	}
	return c.data, c.err
}

func (r *replay) Provide(ctx context.Context, key string, value json.RawMessage) error {
	c, pass, err := r.answer(opProvide, key, "", value)
	if pass {
		return r.host.Provide(ctx, key, value)
	}
	if err != nil {
		return err
	}
	return c.err
}

func (r *replay) Contribute(ctx context.Context, point string, item json.RawMessage) (string, error) {
	c, pass, err := r.answer(opContribute, point, "", item)
	if pass {
		return r.host.Contribute(ctx, point, item)
	}
	if err != nil {
		return "", err
	}
	return c.text, c.err
}

// Log passes: a woken plugin's activation logs again.
func (r *replay) Log(ctx context.Context, level, msg string) { r.host.Log(ctx, level, msg) }
