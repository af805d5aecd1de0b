package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// activateAgent loads the fiber's code through the executor and runs its
// activation against a bridge bound to this activation.
func (k *Kernel) activateAgent(ctx context.Context, f *fiber, gen uint64) error {
	if k.exec == nil {
		return k.errf(CodeActivation, "activate", f.id, "no executor is configured for agent plugins")
	}
	unit, err := k.exec.Load(ctx, Bundle{Manifest: f.manifest, Code: f.code, CodeHash: f.codeHash})
	if err != nil {
		return k.wrapErr("activate", f.id, "load code", err)
	}
	k.reg.RLock()
	act := f.act
	k.reg.RUnlock()
	act.setUnit(unit)
	k.record(f, "unit", act.close)
	start := time.Now()
	err = unit.Activate(ctx, &hostBridge{k: k, f: f, gen: gen, act: act})
	k.spent(ctx, k.payer(f), start) // an activation's time is the plugin's too
	if err != nil {
		return k.activationErr(f.id, err)
	}
	return nil
}

// hostBridge implements HostBridge for one activation of one agent fiber.
type hostBridge struct {
	k   *Kernel
	f   *fiber
	gen uint64
	act *activation
}

// read reads a declared key for the activation while it lives, or while a
// transition drains it: its calls finish on it and may read what their
// version declared.
func (b *hostBridge) read(key string) (any, error) {
	v, err := b.k.read(b.f, b.gen, key)
	if CodeOf(err) == CodeLifecycle && b.act.serving() {
		// A transition marks the activation draining before it disposes
		// of it, so a read that finds it disposed finds it draining.
		return b.k.readDeclared(b.f, key, b.act.keys())
	}
	return v, err
}

func (b *hostBridge) Get(_ context.Context, key string) (json.RawMessage, error) {
	v, err := b.read(key)
	if err != nil {
		return nil, err
	}
	return b.snapshot("get", v)
}

func (b *hostBridge) Invoke(ctx context.Context, key, method string, args json.RawMessage) (json.RawMessage, error) {
	v, err := b.read(key)
	if err != nil {
		return nil, err
	}
	if err := b.k.checkMethod(b.f, key, method); err != nil {
		return nil, err
	}
	payer, active := b.k.payerActive(b.f)
	if active { // an activation's calls are never refused: a plugin over budget must not fail to activate into quarantine
		if err := b.k.admit(ctx, "invoke", payer); err != nil {
			return nil, err
		}
	}
	ctx = withPayer(ctx, payer)
	list, err := b.args(args)
	if err != nil {
		return nil, err
	}
	var out any
	switch s := v.(type) {
	case Invoker:
		out, err = s.Invoke(ctx, method, list)
	case map[string]any:
		fn, ok := s[method].(Func)
		if !ok {
			return nil, b.k.errf(CodeNotFound, "invoke", b.f.id, fmt.Sprintf("key %q has no method %q", key, method))
		}
		out, err = fn(ctx, list...)
	default:
		return nil, b.k.errf(CodeNotFound, "invoke", b.f.id, fmt.Sprintf("key %q has no methods", key))
	}
	if err != nil {
		return nil, err
	}
	return b.snapshot("invoke", out)
}

func (b *hostBridge) Provide(_ context.Context, key string, value json.RawMessage) error {
	v, err := b.decode("provide", value)
	if err != nil {
		return err
	}
	return b.k.provide(b.f, b.gen, key, v)
}

func (b *hostBridge) Contribute(_ context.Context, point string, item json.RawMessage) (string, error) {
	v, err := b.decode("contribute", item)
	if err != nil {
		return "", err
	}
	return b.k.contribute(b.f, b.gen, point, v)
}

func (b *hostBridge) Log(_ context.Context, level, msg string) {
	l := b.k.logger.With("kernel", b.k.name, "fiber", b.f.id)
	switch level {
	case "error":
		l.Error(msg)
	case "warn":
		l.Warn(msg)
	case "debug":
		l.Debug(msg)
	default:
		l.Info(msg)
	}
}

func (b *hostBridge) snapshot(op string, v any) (json.RawMessage, error) {
	raw, err := Snapshot(v)
	if err != nil {
		e := b.k.errf(CodeValidation, op, b.f.id, "value cannot cross the bridge")
		e.Err = err
		return nil, e
	}
	return raw, nil
}

func (b *hostBridge) decode(op string, raw json.RawMessage) (any, error) {
	v, err := Decode(raw)
	if err != nil {
		e := b.k.errf(CodeValidation, op, b.f.id, "value cannot cross the bridge")
		e.Err = err
		return nil, e
	}
	return withFuncs(v, b.proxy), nil
}

func (b *hostBridge) args(raw json.RawMessage) ([]any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	v, err := b.decode("invoke", raw)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, b.k.errf(CodeValidation, "invoke", b.f.id, "arguments must be a JSON array")
	}
	return list, nil
}

// proxy turns a {"$fn": id} reference into a Func that calls the unit while
// this activation lives, or while a transition drains it. Each call is
// counted in and out of the activation: a drain closes the unit only once
// its calls have ended.
func (b *hostBridge) proxy(id string) Func {
	return func(ctx context.Context, args ...any) (any, error) {
		b.k.reg.RLock()
		alive := b.f.gen == b.gen && (b.f.state == StateLoading || b.f.state == StateActive)
		payer := Payer{Plugin: b.f.id, RequestedBy: b.f.requestedBy}
		b.k.reg.RUnlock()
		if !alive && !b.act.serving() || !b.act.enter() {
			return nil, b.k.errf(CodeLifecycle, "call", b.f.id, fmt.Sprintf("function %s belongs to a disposed plugin", id))
		}
		defer b.act.leave()
		b.act.mu.Lock()
		unit := b.act.unit
		b.act.mu.Unlock()
		if unit == nil {
			return nil, b.k.errf(CodeLifecycle, "call", b.f.id, fmt.Sprintf("function %s belongs to a plugin still loading", id))
		}
		if args == nil {
			args = []any{}
		}
		raw, err := b.snapshot("call", args)
		if err != nil {
			return nil, err
		}
		if err := b.k.admit(ctx, "call", payer); err != nil {
			return nil, err
		}
		start := time.Now()
		out, err := unit.Call(ctx, id, raw)
		b.k.spent(ctx, payer, start)
		if err != nil {
			b.k.stoppedCall(b.f, b.gen, err, ctx.Err() != nil)
			return nil, err
		}
		if b.f.stops.Load() != 0 || b.f.restarts.Load() != 0 {
			b.f.stops.Store(0) // a call answered: stops are no longer in a row
			b.f.restarts.Store(0)
		}
		return b.decode("call", out)
	}
}
