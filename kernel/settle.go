package kernel

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Settle reconciles fibers with their targets: every active fiber that is
// disabled or lost a dependency is deactivated (consumers first), then every
// enabled inactive fiber whose injected keys are all provided is activated,
// in install order, including those a fresh activation makes satisfiable. It
// returns the activation failures of this pass, joined; the failed fibers
// stay in state failed until enabled or proposed again.
func (k *Kernel) Settle(ctx context.Context) error {
	ctx, err := k.lock(ctx, "settle")
	if err != nil {
		return err
	}
	defer k.mu.Unlock()
	failed, err := k.settle(ctx)
	if err != nil {
		return err
	}
	return errors.Join(failed...)
}

// settle runs under k.mu. It returns the activation failures of this pass
// and, separately, an error that stopped the pass (a cancelled context). Its
// cost is linear in fibers plus the dependency edges of the fibers whose
// state changes.
func (k *Kernel) settle(ctx context.Context) (failed []error, err error) {
	k.reg.RLock()
	var stale []*fiber
	for _, f := range k.order {
		if f.state == StateActive && (!f.enabled || !k.satisfied(f)) {
			stale = append(stale, f)
		}
	}
	queue := make([]*fiber, 0, len(k.order))
	for _, f := range k.order {
		if f.enabled && f.state != StateFailed {
			queue = append(queue, f)
		}
	}
	k.reg.RUnlock()
	for _, f := range stale {
		k.deactivateTree(ctx, f)
	}
	for i := 0; i < len(queue); i++ {
		f := queue[i]
		if !k.ready(f) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return failed, err
		}
		if err := k.activate(ctx, f); err != nil {
			failed = append(failed, err)
			continue
		}
		queue = append(queue, k.waiting(f)...)
	}
	return failed, nil
}

// ready reports whether f should be activated now.
func (k *Kernel) ready(f *fiber) bool {
	k.reg.RLock()
	defer k.reg.RUnlock()
	return f.enabled && f.state == StateInactive && k.fibers[f.id] == f && k.satisfied(f) &&
		(!k.safeMode || f.trust != TrustAgent)
}

// waiting returns the inactive consumers of the keys f provides.
func (k *Kernel) waiting(f *fiber) []*fiber {
	k.reg.RLock()
	defer k.reg.RUnlock()
	var out []*fiber
	for _, key := range f.provides {
		for _, c := range k.consumers[key] {
			if c.state == StateInactive && c.enabled {
				out = append(out, c)
			}
		}
	}
	return out
}

// deactivateTree deactivates root after every active fiber that depends on
// it, transitively: a provider outlives its consumers. The walk is an
// iterative post-order DFS, so a deep chain cannot overflow the stack.
func (k *Kernel) deactivateTree(ctx context.Context, root *fiber) {
	for _, f := range k.dependentsFirst(root) {
		k.deactivate(ctx, f)
	}
}

func (k *Kernel) dependentsFirst(root *fiber) []*fiber {
	k.reg.RLock()
	defer k.reg.RUnlock()
	type frame struct {
		f        *fiber
		expanded bool
	}
	const (
		open = 1
		done = 2
	)
	mark := map[*fiber]int{}
	var order []*fiber
	stack := []frame{{f: root}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.expanded {
			mark[top.f] = done
			order = append(order, top.f)
			stack = stack[:len(stack)-1]
			continue
		}
		if mark[top.f] != 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		mark[top.f] = open
		top.expanded = true
		f := top.f
		for _, key := range f.provides {
			for _, c := range k.consumers[key] {
				if c.state == StateActive && mark[c] == 0 {
					stack = append(stack, frame{f: c})
				}
			}
		}
	}
	return order
}

// activate runs one fiber's activation: declarative contributes first, then
// its code. On error everything already applied is undone, in reverse order,
// and the fiber is left failed.
func (k *Kernel) activate(ctx context.Context, f *fiber) error {
	k.reg.Lock()
	f.state, f.err, f.effects, f.act = StateLoading, nil, nil, nil
	if f.trust == TrustAgent {
		f.act = newActivation()
	}
	f.gen++
	gen := f.gen
	legacy := f.trust == TrustAgent && f.caps == nil
	k.reg.Unlock()
	if legacy {
		caps := k.DeriveCapabilities(f.manifest)
		k.reg.Lock()
		f.caps = caps
		k.reg.Unlock()
	}
	// The outcome is recorded even when ctx ends meanwhile: Restore counts
	// an activation without one as a crash.
	record := context.WithoutCancel(ctx)
	if f.trust == TrustAgent {
		k.audit(record, EventFiberActivating, f.id, activationData{CodeHash: f.codeHash})
	}
	err := k.applyContributes(f, gen)
	if err == nil {
		err = k.runActivate(ctx, f, gen)
	}
	if err != nil {
		k.undo(f)
		k.reg.Lock()
		f.gen++ // disposes proxies and contexts handed out during the attempt
		f.state, f.err = StateFailed, err
		k.reg.Unlock()
		cancelled := ctx.Err() != nil // the caller left or the kernel stops: not the plugin's failure
		k.audit(record, EventFiberFailed, f.id, activationData{CodeHash: f.codeHash, Error: err.Error(), Cancelled: cancelled})
		if !cancelled {
			k.failedActivation(ctx, f)
		}
		return err
	}
	k.reg.Lock()
	f.state, f.failures = StateActive, 0
	k.reg.Unlock()
	k.audit(record, EventFiberActivated, f.id, activationData{CodeHash: f.codeHash})
	return nil
}

// applyContributes contributes the manifest's declarative items, points in
// name order and items in the order given.
func (k *Kernel) applyContributes(f *fiber, gen uint64) error {
	points := make([]string, 0, len(f.manifest.Contributes))
	for p := range f.manifest.Contributes {
		points = append(points, p)
	}
	slices.Sort(points)
	for _, p := range points {
		for _, item := range f.manifest.Contributes[p] {
			if _, err := k.contribute(f, gen, p, item); err != nil {
				return err
			}
		}
	}
	return nil
}

// runActivate runs a system plugin's ActivateFunc in process, or loads an
// agent plugin through the executor. A panic fails the fiber, not the kernel.
func (k *Kernel) runActivate(ctx context.Context, f *fiber, gen uint64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = k.errf(CodeActivation, "activate", f.id, fmt.Sprintf("panic: %v", r))
		}
	}()
	if f.trust == TrustAgent {
		return k.activateAgent(ctx, f, gen)
	}
	if f.activate == nil {
		return nil
	}
	if err := f.activate(ctx, &Context{k: k, f: f, gen: gen}); err != nil {
		return k.activationErr(f.id, err)
	}
	return nil
}

// deactivate undoes an active fiber's effects and leaves it inactive.
func (k *Kernel) deactivate(ctx context.Context, f *fiber) {
	k.reg.Lock()
	if f.state != StateActive {
		k.reg.Unlock()
		return
	}
	f.state = StateUnloading
	f.gen++ // from here on, contexts, bridges and function proxies are dead
	k.reg.Unlock()
	k.undo(f)
	k.reg.Lock()
	f.state = StateInactive
	k.reg.Unlock()
	k.audit(ctx, EventFiberDeactivated, f.id, nil)
}

// undo runs the fiber's inverses newest first. A failing inverse taints the
// kernel and is logged; the remaining inverses still run.
func (k *Kernel) undo(f *fiber) {
	k.reg.Lock()
	effects := f.effects
	f.effects = nil
	k.reg.Unlock()
	for i := len(effects) - 1; i >= 0; i-- {
		if err := safeUndo(effects[i].undo); err != nil {
			k.Taint(TaintUndoFailed)
			k.logger.Error("Undo failed", "kernel", k.name, "fiber", f.id, "effect", effects[i].what,
				"error", err, "taint", k.Tainted().String())
		}
	}
}

// activationErr passes an error that carries a kernel code through (a plugin
// may have added context to it) and wraps any other as CodeActivation.
func (k *Kernel) activationErr(id string, err error) error {
	if CodeOf(err) != "" {
		return err
	}
	e := k.errf(CodeActivation, "activate", id, "activate failed")
	e.Err = err
	return e
}

func safeUndo(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn()
}
