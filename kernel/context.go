package kernel

import (
	"fmt"
	"log/slog"
)

// Context is what a system plugin's activation receives: its handle on the
// kernel, bound to one fiber and one activation. Get works while the fiber is
// loading or active; Provide, Contribute and OnUndo only while it is loading.
// After the fiber is deactivated every call fails with CodeLifecycle.
type Context struct {
	k   *Kernel
	f   *fiber
	gen uint64
}

// ID returns the fiber's id.
func (c *Context) ID() string { return c.f.id }

// Get returns the value of a key declared in inject or optional.
func (c *Context) Get(key string) (any, error) { return c.k.read(c.f, c.gen, key) }

// Provide provides a key declared in provide; undone on deactivation.
func (c *Context) Provide(key string, value any) error {
	return c.k.provide(c.f, c.gen, key, value)
}

// Contribute adds an item to a point and returns the contribution's id; the
// contribution is withdrawn on deactivation.
func (c *Context) Contribute(point string, item any) (string, error) {
	return c.k.contribute(c.f, c.gen, point, item)
}

// OnUndo records an effect the kernel cannot see (a goroutine, a listener)
// together with its inverse, which runs in reverse order with the others.
func (c *Context) OnUndo(what string, undo func() error) error {
	if err := c.k.requireState(c.f, c.gen, "on undo", StateLoading); err != nil {
		return err
	}
	c.k.record(c.f, what, undo)
	return nil
}

// Kernel returns the system-only kernel API, or nil for fibers below system trust.
func (c *Context) Kernel() *API {
	if c.f.trust < TrustSystem {
		return nil
	}
	return &API{Kernel: c.k, c: c}
}

// Logger returns the kernel's logger with the fiber's id attached.
func (c *Context) Logger() *slog.Logger { return c.k.logger.With("fiber", c.f.id) }

// Lookup reads a declared key and asserts its type, with an error naming
// the key and both types when it does not match.
func Lookup[T any](c *Context, key string) (T, error) {
	var zero T
	v, err := c.Get(key)
	if err != nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, c.k.errf(CodeValidation, "get", c.f.id, fmt.Sprintf("key %q holds %T, not %T", key, v, zero))
	}
	return t, nil
}

// API is the system-only kernel API of one system fiber: the whole *Kernel,
// with the calls that must follow the fiber (observers, declared reads)
// bound to it.
type API struct {
	*Kernel
	c *Context
}

// ObservePoint registers an observer that is removed, with Removed called for
// every remaining contribution, when the fiber deactivates.
func (a *API) ObservePoint(point string, obs Observer) error {
	if err := a.k().requireState(a.c.f, a.c.gen, "observe", StateLoading); err != nil {
		return err
	}
	o, err := a.k().observe(a.c.f, point, obs)
	if err != nil {
		return err
	}
	a.k().record(a.c.f, "observe "+point, func() error { a.k().unobserve(point, o); return nil })
	return nil
}

// GetValue returns a key's value after the same declaration and trust
// checks as Context.Get: soft dependencies are read here and must be listed
// in optional.
func (a *API) GetValue(key string) (any, error) { return a.c.Get(key) }

func (a *API) k() *Kernel { return a.Kernel }

// DefineKey defines a key, recording this fiber as its definer.
func (a *API) DefineKey(name string, meta KeyMeta) error {
	return a.k().defineKey(a.c.f.id, name, meta)
}

// DefinePoint defines a point, recording this fiber as its definer.
func (a *API) DefinePoint(name string, meta PointMeta) error {
	return a.k().definePoint(a.c.f.id, name, meta)
}
