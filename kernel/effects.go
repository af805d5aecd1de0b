package kernel

import (
	"fmt"
	"slices"
	"strconv"
)

// effect is one thing an activation did, with the inverse that undoes it.
type effect struct {
	what string
	undo func() error
}

// record appends an effect to the fiber's current activation.
func (k *Kernel) record(f *fiber, what string, undo func() error) {
	k.reg.Lock()
	f.effects = append(f.effects, effect{what: what, undo: undo})
	k.reg.Unlock()
}

// checkTrust fails and taints the kernel when have is below need.
func (k *Kernel) checkTrust(f *fiber, need Trust, op, what string) error {
	if f.trust >= need {
		return nil
	}
	k.Taint(TaintTrustEscalation)
	return k.errf(CodeTrust, op, f.id, fmt.Sprintf("%s needs %s trust; the fiber has %s", what, need, f.trust))
}

// requireState fails unless the fiber is in generation gen and in one of
// the given states. Effects are only allowed while loading; reads while
// loading or active.
func (k *Kernel) requireState(f *fiber, gen uint64, op string, states ...State) error {
	k.reg.RLock()
	ok := f.gen == gen && slices.Contains(states, f.state)
	state := f.state
	k.reg.RUnlock()
	if ok {
		return nil
	}
	if f.gen != gen {
		state = "disposed"
	}
	return k.errf(CodeLifecycle, op, f.id, fmt.Sprintf("not allowed while the fiber is %s", state))
}

// read returns key's value for fiber f after the declaration and trust checks.
func (k *Kernel) read(f *fiber, gen uint64, key string) (any, error) {
	if err := k.requireState(f, gen, "get", StateLoading, StateActive); err != nil {
		return nil, err
	}
	return k.readDeclared(f, key, nil)
}

// readDeclared is read without the lifecycle check: a key f declares,
// checked against its trust and capabilities. A draining activation
// (snap not nil) reads the value the key had when the transition marked
// it, so a call running on the old version sees the keys that version saw.
func (k *Kernel) readDeclared(f *fiber, key string, snap map[string]any) (any, error) {
	if !f.manifest.declaresRead(key) {
		return nil, k.errf(CodeUndeclaredKey, "get", f.id, fmt.Sprintf("key %q is not declared in inject or optional", key))
	}
	k.reg.RLock()
	e := k.keys[key]
	var meta KeyMeta
	var need []string
	if e != nil {
		meta, need = e.meta, e.requires()
	}
	k.reg.RUnlock()
	if err := k.checkTrust(f, meta.MinConsumerTrust, "get", fmt.Sprintf("reading key %q", key)); err != nil {
		return nil, err
	}
	if err := k.checkCapabilities(f, need, "get", fmt.Sprintf("reading key %q", key)); err != nil {
		return nil, err
	}
	if snap != nil {
		if v, ok := snap[key]; ok {
			return v, nil
		}
		return nil, k.errf(CodeNotFound, "get", f.id, fmt.Sprintf("key %q was not provided to this version", key))
	}
	k.reg.RLock()
	defer k.reg.RUnlock()
	if e == nil || !e.present {
		return nil, k.errfLocked(CodeNotFound, "get", f.id, fmt.Sprintf("key %q is not provided", key))
	}
	return e.value, nil
}

// provide sets key's value on behalf of f and records the inverse.
func (k *Kernel) provide(f *fiber, gen uint64, key string, value any) error {
	if err := k.requireState(f, gen, "provide", StateLoading); err != nil {
		return err
	}
	if !slices.Contains(f.manifest.Provide, key) {
		return k.errf(CodeUndeclaredKey, "provide", f.id, fmt.Sprintf("key %q is not declared in provide", key))
	}
	k.reg.RLock()
	var meta KeyMeta
	if e := k.keys[key]; e != nil {
		meta = e.meta
	}
	k.reg.RUnlock()
	if err := k.checkTrust(f, meta.MinProviderTrust, "provide", fmt.Sprintf("providing key %q", key)); err != nil {
		return err
	}
	if err := k.checkCapabilities(f, meta.ProviderRequires, "provide", fmt.Sprintf("providing key %q", key)); err != nil {
		return err
	}
	k.reg.Lock()
	e := k.keys[key]
	if e == nil {
		e = &keyEntry{}
		k.keys[key] = e
	}
	if e.present {
		owner := e.owner
		k.reg.Unlock()
		return k.errf(CodeConflict, "provide", f.id, fmt.Sprintf("key %q is already provided by %s", key, owner))
	}
	e.value, e.owner, e.present = value, f.id, true
	if f.trust == TrustAgent {
		e.lent = slices.Clone(f.caps)
	}
	f.provides = append(f.provides, key)
	f.effects = append(f.effects, effect{what: "provide " + key, undo: func() error {
		k.reg.Lock()
		defer k.reg.Unlock()
		e.value, e.owner, e.present, e.lent = nil, "", false, nil
		f.provides = slices.DeleteFunc(f.provides, func(s string) bool { return s == key })
		return nil
	}})
	k.reg.Unlock()
	return nil
}

// contribute adds item to point on behalf of f, notifies observers, and
// records the inverse (remove, then notify Removed).
func (k *Kernel) contribute(f *fiber, gen uint64, point string, item any) (string, error) {
	if err := k.requireState(f, gen, "contribute", StateLoading); err != nil {
		return "", err
	}
	if f.trust == TrustAgent && !f.manifest.declaresPoint(point) {
		return "", k.errf(CodeUndeclaredPoint, "contribute", f.id,
			fmt.Sprintf("point %q is not declared in the manifest's points", point))
	}
	k.reg.RLock()
	p := k.points[point]
	k.reg.RUnlock()
	if p == nil {
		return "", k.errf(CodeUnknownPoint, "contribute", f.id, fmt.Sprintf("point %q is not defined", point))
	}
	if err := k.checkTrust(f, p.meta.MinContributorTrust, "contribute", fmt.Sprintf("contributing to point %q", point)); err != nil {
		return "", err
	}
	if err := k.checkCapabilities(f, p.meta.Requires, "contribute", fmt.Sprintf("contributing to point %q", point)); err != nil {
		return "", err
	}
	if check := p.meta.validator(f.id); check != nil {
		if err := safeValidate(check, item); err != nil {
			e := k.errf(CodeValidation, "contribute", f.id, fmt.Sprintf("point %q rejected the item", point))
			e.Err = err
			return "", e
		}
	}
	k.reg.Lock()
	k.seq++
	c := Contribution{ID: f.id + "#" + strconv.FormatUint(k.seq, 10), Point: point, Fiber: f.id, Item: item}
	p.contribs = append(p.contribs, c)
	observers := slices.Clone(p.observers)
	act := f.act
	k.reg.Unlock()
	k.record(f, "contribute "+point, func() error { return k.withdraw(p, c, act) })
	for _, o := range observers {
		if o.Added != nil {
			o.Added(c)
		}
	}
	k.reg.changed()
	return c.ID, nil
}

// withdraw removes c from p and tells the current observers, newest first.
func (k *Kernel) withdraw(p *pointEntry, c Contribution, act *activation) error {
	k.reg.Lock()
	p.contribs = slices.DeleteFunc(p.contribs, func(x Contribution) bool { return x.ID == c.ID })
	observers := slices.Clone(p.observers)
	k.reg.Unlock()
	for i := len(observers) - 1; i >= 0; i-- {
		o := observers[i]
		if o.Removed == nil {
			continue
		}
		if o.LateRemove && act.hold(func() { o.Removed(c) }) {
			continue // a transition drains the activation: the observer hears of it when the new version is in
		}
		o.Removed(c)
	}
	k.reg.changed()
	return nil
}

func safeValidate(validate func(any) error, item any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("validator panicked: %v", r)
		}
	}()
	return validate(item)
}
