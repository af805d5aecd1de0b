package orm

import (
	"context"
	"fmt"
	"maps"

	"github.com/sms-baseline/sms/contracts"
)

// MaxHookDepth bounds hooks and methods that call back into the ORM: a
// call made from a hook or method runs one level deeper, and at this depth
// before hooks and methods fail and after hooks are skipped, so one that
// triggers itself ends.
const MaxHookDepth = 8

type depthKey struct{}

func deeper(ctx context.Context) (context.Context, bool) {
	d, _ := ctx.Value(depthKey{}).(int)
	if d >= MaxHookDepth {
		return ctx, false
	}
	return context.WithValue(ctx, depthKey{}, d+1), true
}

// before runs c's model's before hooks in contribution order, outside any
// transaction; the first failure rejects the write before anything is
// applied.
func (s *service) before(ctx context.Context, sch *schema, c Change) error {
	c.When = WhenBefore
	hooks := hooksFor(sch, c, WhenBefore)
	if len(hooks) == 0 {
		return nil
	}
	ctx, ok := deeper(ctx)
	if !ok {
		return errorf(ErrRejected, at{c.Model, ""}, "%s rejected: hooks are nested %d deep", c.Event, MaxHookDepth)
	}
	for _, h := range hooks {
		if err := callHook(s.asPlugin(ctx, h.plugin), h.item.Handler, copyChange(c)); err != nil {
			return errorf(ErrRejected, at{c.Model, ""}, "%s rejected by a hook of plugin %s: %v", c.Event, h.plugin, err)
		}
	}
	return nil
}

// after runs the after hooks and the listeners once the write committed
// (inside contracts.Atomic, once the whole transaction has); failures are
// logged, never undoing the write.
func (s *service) after(ctx context.Context, sch *schema, c Change) {
	contracts.AfterCommit(ctx, func() { s.afterNow(ctx, sch, c) })
}

func (s *service) afterNow(ctx context.Context, sch *schema, c Change) {
	c.When = WhenAfter
	ctx = context.WithoutCancel(ctx)
	if hooks := hooksFor(sch, c, WhenAfter); len(hooks) > 0 {
		if dctx, ok := deeper(ctx); ok {
			for _, h := range hooks {
				if err := callHook(s.asPlugin(dctx, h.plugin), h.item.Handler, copyChange(c)); err != nil {
					s.logger.Error("ORM hook failed", "model", c.Model, "on", string(c.Event), "plugin", h.plugin, "error", err)
				}
			}
		} else {
			s.logger.Error("ORM hooks skipped: nested too deep", "model", c.Model, "on", string(c.Event), "depth", MaxHookDepth)
		}
	}
	c.When = ""
	s.notify(ctx, c)
}

// actingKey carries the operation context an agent plugin's hook acts
// with when it is not the writer's (asPlugin).
type actingKey struct{}

// asPlugin is ctx acting for whoever asked for plugin, when it is an
// agent plugin and Options.ActAs says who that is: the hook's own ORM
// calls act for them, not for the writer (whom Change.Op still names).
func (s *service) asPlugin(ctx context.Context, plugin string) context.Context {
	if s.actAs == nil || s.isSystem(plugin) {
		return ctx
	}
	ctx = s.actAs(ctx, plugin)
	op := s.contextOf(ctx)
	op.Sudo = false
	return context.WithValue(ctx, actingKey{}, op)
}

// actingOp is the operation context an agent hook acts with: asPlugin's,
// else the writer's.
func actingOp(ctx context.Context, writer OpContext) OpContext {
	if op, ok := ctx.Value(actingKey{}).(OpContext); ok {
		return op
	}
	writer.Sudo = false
	return writer
}

func hooksFor(sch *schema, c Change, when When) []owned[Hook] {
	var out []owned[Hook]
	for _, h := range sch.hooks[c.Model] {
		if h.item.On == c.Event && h.item.When == when {
			out = append(out, h)
		}
	}
	return out
}

func copyChange(c Change) Change {
	c.Values = maps.Clone(c.Values)
	c.IDs = append([]int64(nil), c.IDs...)
	return c
}

func callHook(ctx context.Context, fn HookFunc, c Change) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("hook panicked: %v", p)
		}
	}()
	return fn(ctx, c)
}

func callMethod(ctx context.Context, m owned[Method], call MethodCall) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("method panicked: %v", p)
		}
	}()
	return m.item.Handler(ctx, call)
}

func (s *service) Call(ctx context.Context, model string, req MethodRequest) (any, error) {
	method, ids, args := req.Method, req.IDs, req.Args
	sch, m, err := s.model(ctx, model)
	if err != nil {
		return nil, err
	}
	meth, ok := sch.methods[m.name][method]
	if !ok {
		return nil, errorf(ErrNotFound, at{m.name, ""}, "no method %s", method)
	}
	r := &reader{ctx: ctx, s: s, sch: sch}
	defer r.release()
	rows, err := r.byIDs(m, ids)
	if err != nil {
		return nil, err
	}
	if len(rows) != len(uniq(ids)) {
		return nil, errorf(ErrNotFound, at{m.name, ""}, "some of records %s do not exist or may not be read by this user", joinIDs(ids))
	}
	call := MethodCall{Model: m.name, IDs: ids, Records: scalars(m, rows), Args: args, Op: s.opOf(ctx)}
	if meth.system {
		call.Orm = s
	}
	ctx, ok = deeper(ctx)
	if !ok {
		return nil, errorf(ErrRejected, at{m.name, ""}, "method %s: methods and hooks are nested %d deep", method, MaxHookDepth)
	}
	out, err := callMethod(ctx, meth, call)
	if err != nil {
		return nil, errorf(ErrRejected, at{m.name, ""}, "method %s (plugin %s) failed: %v", method, meth.plugin, err)
	}
	return out, nil
}

func uniq(ids []int64) map[int64]bool {
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

func (s *service) Onchange(ctx context.Context, model, field string, values map[string]any) (map[string]any, error) {
	sch, m, err := s.model(ctx, model)
	if err != nil {
		return nil, err
	}
	if m.fields[field] == nil {
		return nil, errorf(ErrInvalid, at{m.name, field}, "no such field")
	}
	op := s.opOf(ctx)
	if _, err := s.admit(ctx, op, m.name, ActionRead); err != nil {
		return nil, err
	}
	changes := map[string]any{}
	cur := maps.Clone(values)
	if cur == nil {
		cur = map[string]any{}
	}
	for _, o := range sch.onchanges[m.name] {
		if o.item.Field != field {
			continue
		}
		out, err := callOnchange(ctx, o.item.Handler, OnchangeEvent{Model: m.name, Field: field, Values: maps.Clone(cur), Op: op})
		if err != nil && o.plugin != m.plugin {
			// Another plugin's onchange does not break the model's form.
			s.logger.Warn("ORM onchange failed; skipped", "model", m.name, "field", field, "plugin", o.plugin, "error", err)
			continue
		}
		if err != nil {
			return nil, errorf(ErrRejected, at{m.name, field}, "onchange of plugin %s failed: %v", o.plugin, err)
		}
		for k, v := range out {
			if m.fields[k] == nil {
				return nil, errorf(ErrInvalid, at{m.name, k}, "onchange of plugin %s changes a field the model does not have", o.plugin)
			}
			changes[k], cur[k] = v, v
		}
	}
	return changes, nil
}

func callOnchange(ctx context.Context, fn OnchangeFunc, e OnchangeEvent) (out map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("onchange panicked: %v", p)
		}
	}()
	return fn(ctx, e)
}
