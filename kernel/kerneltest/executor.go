package kerneltest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/sms-baseline/sms/kernel"
)

// Script is the activation of a fake agent plugin. It talks to the kernel
// only through host, as real agent code does, and may register functions on
// u to hand over as {"$fn": id} references.
type Script func(ctx context.Context, host kernel.HostBridge, u *Unit) error

// Fn is a function a fake agent plugin hands to the host.
type Fn func(ctx context.Context, args []any) (any, error)

// Executor is a fake kernel.Executor. An agent plugin's code is the name of
// a Script registered with Register.
type Executor struct {
	mu      sync.Mutex
	scripts map[string]Script
	loaded  int
	closed  int
}

// NewExecutor returns an executor with no scripts.
func NewExecutor() *Executor { return &Executor{scripts: map[string]Script{}} }

// Register makes code runnable: loading a bundle whose code is exactly code
// runs s on activation.
func (e *Executor) Register(code string, s Script) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.scripts[code] = s
}

// Load implements kernel.Executor.
func (e *Executor) Load(_ context.Context, b kernel.Bundle) (kernel.Unit, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.scripts[string(b.Code)]
	if !ok {
		return nil, fmt.Errorf("kerneltest: no script registered for code %q", b.Code)
	}
	e.loaded++
	return &Unit{exec: e, script: s, fns: map[string]Fn{}}, nil
}

// Loaded returns how many units were loaded.
func (e *Executor) Loaded() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.loaded
}

// Closed returns how many units were closed.
func (e *Executor) Closed() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// Unit is a loaded fake agent plugin.
type Unit struct {
	exec   *Executor
	script Script
	mu     sync.Mutex
	fns    map[string]Fn
	closed bool
}

// Func registers fn under id and returns the {"$fn": id} reference to put
// into a contributed item or provided value.
func (u *Unit) Func(id string, fn Fn) map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.fns[id] = fn
	return map[string]any{"$fn": id}
}

// Activate implements kernel.Unit.
func (u *Unit) Activate(ctx context.Context, host kernel.HostBridge) error {
	return u.script(ctx, host, u)
}

// Call implements kernel.Unit.
func (u *Unit) Call(ctx context.Context, fn string, args json.RawMessage) (json.RawMessage, error) {
	u.mu.Lock()
	f, ok := u.fns[fn]
	closed := u.closed
	u.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("kerneltest: unit is closed")
	}
	if !ok {
		return nil, fmt.Errorf("kerneltest: no function %q", fn)
	}
	var list []any
	if err := json.Unmarshal(args, &list); err != nil {
		return nil, fmt.Errorf("kerneltest: arguments: %w", err)
	}
	out, err := f(ctx, list)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// Close implements kernel.Unit.
func (u *Unit) Close() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.closed {
		u.closed = true
		u.exec.mu.Lock()
		u.exec.closed++
		u.exec.mu.Unlock()
	}
	return nil
}

// JSON encodes v for a bridge call, failing the test helper's caller loudly
// on values that cannot be encoded (a programming error in the test).
func JSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("kerneltest: encode %T: %v", v, err))
	}
	return raw
}

// Agent mints an authorization for an agent plugin whose code is the script
// name code and proposes it.
func Agent(ctx context.Context, k *kernel.Kernel, m kernel.Manifest, code string) error {
	auth, err := k.Authorize(m, kernel.HashCode([]byte(code)))
	if err != nil {
		return err
	}
	if err := k.Propose(ctx, kernel.Proposal{Manifest: m, Code: []byte(code), Auth: auth}); err != nil {
		return err // the mount stays staged, as a failed activation left it
	}
	return k.Commit(ctx, m.ID, kernel.HashCode([]byte(code)))
}
