package collections

import (
	"context"
	"fmt"
	"maps"
)

// before runs the before hooks of e's collection and operation in
// contribution order. The first failure rejects the write: nothing has been
// written yet, and the error wraps ErrRejected and names the hook's plugin.
// Hooks run outside any transaction (an agent hook may call back into this
// service, and SQLite has one connection), so they see the record as it was
// read just before the write, not a locked snapshot.
func (s *service) before(ctx context.Context, e HookEvent) error {
	e.When = WhenBefore
	hooks := s.reg.hooksFor(e.Collection, e.On, WhenBefore)
	if len(hooks) == 0 {
		return nil
	}
	ctx, ok := deeper(ctx)
	if !ok {
		return &valueError{kind: ErrRejected, msg: fmt.Sprintf("collection %q: %s rejected: hooks are nested %d deep, "+
			"so a hook's write keeps triggering hooks", e.Collection, e.On, MaxHookDepth)}
	}
	for _, h := range hooks {
		if err := callHook(ctx, h.item.Handler, copyEvent(e)); err != nil {
			return &valueError{kind: ErrRejected,
				msg: fmt.Sprintf("collection %q: %s rejected by a hook of plugin %s: %v", e.Collection, e.On, h.plugin, err)}
		}
	}
	return nil
}

// after runs the after hooks once the write is committed. The write stands
// whatever they do, so a failure is logged (naming the plugin) rather than
// returned, and a caller that goes away does not cancel them.
func (s *service) after(ctx context.Context, e HookEvent) {
	e.When = WhenAfter
	hooks := s.reg.hooksFor(e.Collection, e.On, WhenAfter)
	if len(hooks) == 0 {
		return
	}
	ctx, ok := deeper(context.WithoutCancel(ctx))
	if !ok {
		s.logger.Error("Collection hooks skipped: nested too deep", "collection", e.Collection, "on", string(e.On),
			"depth", MaxHookDepth)
		return
	}
	for _, h := range hooks {
		if err := callHook(ctx, h.item.Handler, copyEvent(e)); err != nil {
			s.logger.Error("Collection hook failed", "collection", e.Collection, "on", string(e.On),
				"plugin", h.plugin, "error", err)
		}
	}
}

// depthKey is the context key of the hook nesting depth.
type depthKey struct{}

// deeper returns ctx one hook level deeper, or false at MaxHookDepth.
func deeper(ctx context.Context) (context.Context, bool) {
	d, _ := ctx.Value(depthKey{}).(int)
	if d >= MaxHookDepth {
		return ctx, false
	}
	return context.WithValue(ctx, depthKey{}, d+1), true
}

// copyEvent gives each hook its own records, so one hook changing them
// cannot change what the next hook or the caller sees.
func copyEvent(e HookEvent) HookEvent {
	e.Record, e.Previous = maps.Clone(e.Record), maps.Clone(e.Previous)
	return e
}

// callHook runs a hook; a panic becomes its error.
func callHook(ctx context.Context, fn HookFunc, e HookEvent) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("hook panicked: %v", p)
		}
	}()
	return fn(ctx, e)
}
