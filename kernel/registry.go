package kernel

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Contribution is one item a fiber contributed to a point.
type Contribution struct {
	ID    string `json:"id"`    // unique for the kernel's lifetime
	Point string `json:"point"` // the point it was contributed to
	Fiber string `json:"fiber"` // the contributing fiber
	Item  any    `json:"item"`
}

// Observer reacts to a point's contributions. Added sees every contribution
// present when the observer registers and every later one; Removed is called
// with the same contribution when it is undone, and for every remaining
// contribution when the observer itself is undone. Removed must be the exact
// inverse of Added. Both run synchronously inside the kernel operation and
// must not call back into kernel operations that change fibers.
type Observer struct {
	Added   func(Contribution)
	Removed func(Contribution)
	// LateRemove lets a transition hold back Removed for the contributions
	// of the version it replaces until the new version is in place: the
	// observer then holds both for a while (the old one first) and must
	// prefer the older of two that collide, as the HTTP routing table
	// does, so that work switches from one whole version to the other.
	LateRemove bool
}

// regMutex is the registry's lock. Every write section moves the
// kernel's generation as it ends, so nothing changes the registry without
// Generation showing it.
type regMutex struct {
	sync.RWMutex
	gen atomic.Uint64
}

// Unlock ends a write section and moves the generation.
func (m *regMutex) Unlock() {
	m.gen.Add(1)
	m.RWMutex.Unlock()
}

// changed moves the generation after observers reacted to a change.
func (m *regMutex) changed() { m.gen.Add(1) }

type keyEntry struct {
	meta    KeyMeta
	definer string // fiber id that defined it; "" for the composition root
	defined bool
	value   any
	owner   string // fiber providing it
	present bool
	// lent is the capability set of the agent fiber providing it: a
	// consumer needs it too, or one plugin could lend another what it may
	// do through functions in the value it provides.
	lent []string
}

// requires is what reading the key needs: its Requires and, while an
// agent fiber provides it, that fiber's capabilities. The caller holds
// k.reg for reading.
func (e *keyEntry) requires() []string {
	if len(e.lent) == 0 {
		return e.meta.Requires
	}
	return append(slices.Clone(e.meta.Requires), e.lent...)
}

type pointEntry struct {
	meta      PointMeta
	definer   string
	contribs  []Contribution
	observers []*Observer
}

// DefineKey registers a key's metadata. Definitions are vocabulary rather
// than effects: they outlive the fiber that made them, so a key's trust can
// never be loosened by withdrawing and re-defining it. Re-defining a key is
// allowed only with the same trust.
func (k *Kernel) DefineKey(name string, meta KeyMeta) error {
	return k.defineKey("", name, meta)
}

func (k *Kernel) defineKey(definer, name string, meta KeyMeta) error {
	if !validName(name) {
		return k.errf(CodeValidation, "define key", definer, fmt.Sprintf("invalid key name %q", name))
	}
	k.reg.Lock()
	defer k.reg.Unlock()
	e := k.keys[name]
	if e == nil {
		e = &keyEntry{}
		k.keys[name] = e
	}
	if e.defined && (e.meta.MinProviderTrust != meta.MinProviderTrust || e.meta.MinConsumerTrust != meta.MinConsumerTrust) {
		return k.errfLocked(CodeConflict, "define key", definer, fmt.Sprintf("key %q is already defined with other trust", name))
	}
	if e.defined && !sameKeyRequirements(e.meta, meta) {
		return k.errfLocked(CodeConflict, "define key", definer, fmt.Sprintf("key %q is already defined with other capability requirements", name))
	}
	e.meta, e.definer, e.defined = meta, definer, true
	return nil
}

// DefinePoint registers an extension point. Like keys, points outlive the
// fiber that defined them; re-defining one is allowed only with the same
// trust, and replaces its description and validator.
func (k *Kernel) DefinePoint(name string, meta PointMeta) error {
	return k.definePoint("", name, meta)
}

func (k *Kernel) definePoint(definer, name string, meta PointMeta) error {
	if !validName(name) {
		return k.errf(CodeValidation, "define point", definer, fmt.Sprintf("invalid point name %q", name))
	}
	k.reg.Lock()
	defer k.reg.Unlock()
	if p := k.points[name]; p != nil {
		if p.meta.MinContributorTrust != meta.MinContributorTrust {
			return k.errfLocked(CodeConflict, "define point", definer, fmt.Sprintf("point %q is already defined with other trust", name))
		}
		if !sameSet(p.meta.Requires, meta.Requires) {
			return k.errfLocked(CodeConflict, "define point", definer, fmt.Sprintf("point %q is already defined with other capability requirements", name))
		}
		p.meta, p.definer = meta, definer
		return nil
	}
	k.points[name] = &pointEntry{meta: meta, definer: definer}
	return nil
}

// ObservePoint registers an observer that lives as long as the kernel. System
// fibers use API.ObservePoint instead, which is undone with the fiber.
func (k *Kernel) ObservePoint(point string, obs Observer) error {
	_, err := k.observe(nil, point, obs)
	return err
}

func (k *Kernel) observe(f *fiber, point string, obs Observer) (*Observer, error) {
	k.reg.Lock()
	p := k.points[point]
	if p == nil {
		k.reg.Unlock()
		return nil, k.errf(CodeUnknownPoint, "observe", fiberID(f), fmt.Sprintf("point %q is not defined", point))
	}
	o := &obs
	p.observers = append(p.observers, o)
	existing := slices.Clone(p.contribs)
	k.reg.Unlock()
	if o.Added != nil {
		for _, c := range existing {
			o.Added(c)
		}
	}
	k.reg.changed()
	return o, nil
}

// unobserve removes o and reports every remaining contribution as Removed,
// newest first, so the observer's view ends empty.
func (k *Kernel) unobserve(point string, o *Observer) {
	k.reg.Lock()
	p := k.points[point]
	var remaining []Contribution
	if p != nil {
		p.observers = slices.DeleteFunc(p.observers, func(x *Observer) bool { return x == o })
		remaining = slices.Clone(p.contribs)
	}
	k.reg.Unlock()
	if o.Removed != nil {
		for i := len(remaining) - 1; i >= 0; i-- {
			o.Removed(remaining[i])
		}
	}
	k.reg.changed()
}

// GetValue returns the value currently provided for key, with no declaration
// or trust check: it is for the composition root. Fibers read through their
// Context or API, which check both.
func (k *Kernel) GetValue(key string) (any, error) {
	k.reg.RLock()
	defer k.reg.RUnlock()
	e := k.keys[key]
	if e == nil || !e.present {
		return nil, k.errfLocked(CodeNotFound, "get", "", fmt.Sprintf("key %q is not provided", key))
	}
	return e.value, nil
}

// Has reports whether key is currently provided.
func (k *Kernel) Has(key string) bool {
	k.reg.RLock()
	defer k.reg.RUnlock()
	e := k.keys[key]
	return e != nil && e.present
}

// Contributions returns a snapshot of the point's contributions in the order
// they were made.
func (k *Kernel) Contributions(point string) []Contribution {
	k.reg.RLock()
	defer k.reg.RUnlock()
	if p := k.points[point]; p != nil {
		return slices.Clone(p.contribs)
	}
	return nil
}

func fiberID(f *fiber) string {
	if f == nil {
		return ""
	}
	return f.id
}
