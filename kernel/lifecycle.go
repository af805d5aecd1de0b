package kernel

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Install adds a system plugin, enabled. It does not activate it: the
// composition root installs every system plugin, then calls Restore (or
// Settle). Installing an id twice is a conflict.
func (k *Kernel) Install(p Plugin) error {
	if err := p.Manifest.Validate(); err != nil {
		return k.tag(err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reg.Lock()
	defer k.reg.Unlock()
	if _, dup := k.fibers[p.Manifest.ID]; dup {
		return k.errfLocked(CodeConflict, "install", p.Manifest.ID, "a plugin with this id is already installed")
	}
	f := &fiber{id: p.Manifest.ID, manifest: p.Manifest.clone(), trust: TrustSystem, enabled: true,
		state: StateInactive, activate: p.Activate, guard: p.RestoreGuard}
	k.addLocked(f)
	k.systemIDs[f.id] = true
	return nil
}

// addLocked registers f and indexes its injected keys; the caller holds k.reg.
func (k *Kernel) addLocked(f *fiber) {
	k.fibers[f.id] = f
	k.order = append(k.order, f)
	for _, key := range f.manifest.Inject {
		k.consumers[key] = append(k.consumers[key], f)
	}
}

// removeLocked unregisters f; the caller holds k.reg.
func (k *Kernel) removeLocked(f *fiber) {
	delete(k.fibers, f.id)
	k.order = slices.DeleteFunc(k.order, func(x *fiber) bool { return x == f })
	for _, key := range f.manifest.Inject {
		k.consumers[key] = slices.DeleteFunc(k.consumers[key], func(x *fiber) bool { return x == f })
	}
}

// Enable marks a fiber enabled, records plugin/enabled and settles. Enabling
// a failed fiber gives it another try.
func (k *Kernel) Enable(ctx context.Context, id string) error {
	return k.setEnabled(ctx, id, toggle{enabled: true})
}

// Disable marks an agent fiber disabled, records plugin/disabled and
// settles, which undoes the fiber and, first, every fiber that depends on
// it. System fibers stay enabled: disabling one is CodeForbidden. The
// disable holds: EnableReversible refuses to undo it (FiberView.Held).
func (k *Kernel) Disable(ctx context.Context, id string) error {
	return k.setEnabled(ctx, id, toggle{})
}

// ForceDisable disables any fiber, system fibers included, for code that
// owns the composition (and tests). It is never reachable from the admin
// API or agent code. A system fiber comes back enabled at the next
// Restore, which taints the kernel (TaintSystemDisableIgnored).
func (k *Kernel) ForceDisable(ctx context.Context, id string) error {
	return k.setEnabled(ctx, id, toggle{force: true})
}

func (k *Kernel) setEnabled(ctx context.Context, id string, t toggle) error {
	op := map[bool]string{true: "enable", false: "disable"}[t.enabled]
	ctx, err := k.lock(ctx, op)
	if err != nil {
		return err
	}
	defer k.mu.Unlock()
	k.reg.RLock()
	f := k.fibers[id]
	k.reg.RUnlock()
	if f == nil {
		return k.errf(CodeNotFound, op, id, "no such plugin")
	}
	if !t.enabled && !t.force && f.trust == TrustSystem {
		return k.errf(CodeForbidden, op, id, "system plugins stay enabled; only agent plugins can be disabled")
	}
	skip, err := k.checkReversible(f, t)
	if skip || err != nil {
		return err
	}
	event := map[bool]string{true: EventPluginEnabled, false: EventPluginDisabled}[t.enabled]
	if err := k.appendEvent(ctx, event, id, t.data()); err != nil {
		return err
	}
	k.noteHold(f, t)
	k.reg.Lock()
	if t.enabled && !f.enabled {
		f.failures, f.quarantine = 0, "" // an enable of a disabled plugin starts afresh
		f.stops.Store(0)
	}
	f.enabled = t.enabled
	f.reversible = t.reversible && !t.enabled
	if t.enabled && f.state == StateFailed {
		f.state, f.err = StateInactive, nil
	}
	k.reg.Unlock()
	if !t.enabled {
		k.endOpen(ctx, id, "disabled") // a version a transition held back stops serving too
	}
	return k.settleFor(ctx, f)
}

// Uninstall removes a fiber after deactivating it and its dependents, and
// records plugin/uninstalled. System fibers need force, and so does a fiber
// another enabled fiber injects a key of (one it provides, or declares and
// nobody else provides): without force that is CodeConflict naming them.
// A forced uninstall of either taints the kernel (TaintForcedUninstall).
func (k *Kernel) Uninstall(ctx context.Context, id string, force bool) error {
	ctx, err := k.lock(ctx, "uninstall")
	if err != nil {
		return err
	}
	defer k.mu.Unlock()
	k.reg.RLock()
	f := k.fibers[id]
	k.reg.RUnlock()
	if f == nil {
		return k.errf(CodeNotFound, "uninstall", id, "no such plugin")
	}
	if f.trust == TrustSystem && !force {
		return k.errf(CodeForbidden, "uninstall", id, "system plugins can only be uninstalled with force")
	}
	users := k.usersOf(f)
	if len(users) > 0 && !force {
		return k.errf(CodeConflict, "uninstall", id, fmt.Sprintf(
			"%s is used: %s; uninstall or disable them first, or force it (which taints the kernel)", id, strings.Join(users, ", ")))
	}
	if err := k.appendEvent(ctx, EventPluginUninstalled, id, nil); err != nil {
		return err
	}
	if f.trust == TrustSystem || len(users) > 0 {
		k.Taint(TaintForcedUninstall)
	}
	delete(k.holds, id)
	k.deactivateTree(ctx, f)
	k.reg.Lock()
	k.removeLocked(f)
	k.reg.Unlock()
	k.endOpen(ctx, id, "uninstalled")
	k.reg.Lock()
	delete(k.trans, id) // views hold installed plugins only, so the map stays as large as they are
	k.reg.Unlock()
	_, err = k.settle(ctx) // other fibers' failures show in their views
	return err
}

// stateOf returns f's state.
func (k *Kernel) stateOf(f *fiber) State {
	k.reg.RLock()
	defer k.reg.RUnlock()
	return f.state
}

// settleFor settles and reports what matters to the caller of an operation
// on f: a cancelled settle, or f's own activation failure. Other fibers'
// failures show in their views.
func (k *Kernel) settleFor(ctx context.Context, f *fiber) error {
	if _, err := k.settle(ctx); err != nil {
		return err
	}
	k.reg.RLock()
	defer k.reg.RUnlock()
	if f.state == StateFailed && f.err != nil {
		return f.err
	}
	return nil
}

// Proposal is an agent plugin submitted for mounting.
type Proposal struct {
	Manifest Manifest
	Code     []byte
	Auth     MountAuthorization
	// Capabilities is the set the judge checked against the requester's
	// grant, when one did: a declaration that now derives more (a key's
	// requirements changed meanwhile) is refused. Nil checks nothing.
	Capabilities []string
}

// Propose mounts an agent plugin: it checks the authorization (single use,
// bound to the id, version, code hash and declaration), refuses ids that
// belong to system fibers, stores the code by hash, records a staged
// plugin/installed and settles. An existing agent fiber with the same id is
// replaced (its old activation is undone first). It returns the fiber's
// activation error, if any. When an admin's disable of the id holds (see
// Disable), the new version installs disabled and held: that decision
// stands until Enable. The mount is staged: the caller commits it with
// Commit once it is satisfied, or undoes it with Abort; until then a restart
// forgets it (see Restore).
func (k *Kernel) Propose(ctx context.Context, p Proposal) error {
	if err := p.Manifest.Validate(); err != nil {
		return k.tag(err)
	}
	ctx, err := k.lock(ctx, "propose")
	if err != nil {
		return err
	}
	defer k.mu.Unlock()
	id := p.Manifest.ID
	if k.safeMode {
		return k.errf(CodeUnavailable, "propose", id, ErrSafeMode.Error())
	}
	if k.isSystemID(id) {
		k.Taint(TaintTrustEscalation)
		return k.errf(CodeReservedID, "propose", id, "the id belongs to a system plugin")
	}
	hash := HashCode(p.Code)
	caps := k.DeriveCapabilities(p.Manifest)
	if p.Capabilities != nil {
		if extra := MissingCapabilities(p.Capabilities, caps); len(extra) > 0 {
			return k.errf(CodeCapability, "propose", id, fmt.Sprintf(
				"the declaration now needs %s beyond what was judged (a key or point requires more since): submit it again", strings.Join(extra, ", ")))
		}
	}
	if err := k.redeem(p.Auth, p.Manifest, hash); err != nil {
		return err
	}
	if _, err := k.blobs.Put(ctx, p.Code); err != nil {
		return k.wrapErr("propose", id, "store code", err)
	}
	k.Fault(FaultCodeStored)
	data := installedData{Manifest: p.Manifest, CodeHash: hash, Trust: TrustAgent, Staged: true, RequestedBy: RequesterOf(ctx),
		Capabilities: caps}
	if err := k.appendEvent(ctx, EventPluginInstalled, id, data); err != nil {
		return err
	}
	k.Fault(FaultInstalled)
	t := k.beginTransition(ctx, p.Manifest, hash)
	f := k.mount(ctx, p.Manifest, p.Code, !k.heldLocked(id))
	k.reg.Lock()
	f.staged, f.requestedBy, f.caps = true, data.RequestedBy, caps
	k.reg.Unlock()
	err = k.settleFor(ctx, f)
	if t != nil && k.stateOf(f) == StateActive {
		k.switchTransition(t) // else the old version serves until the staged one is committed or aborted
	}
	k.Fault(FaultActivated)
	return err
}

func (k *Kernel) isSystemID(id string) bool {
	k.reg.RLock()
	defer k.reg.RUnlock()
	return k.systemIDs[id]
}

// mountTarget installs or replaces an agent fiber as the log's target
// describes it (enabled or disabled, and whether its disable holds); the
// caller holds k.mu.
func (k *Kernel) mountTarget(ctx context.Context, t Target, code []byte) *fiber {
	f := k.mount(ctx, t.Manifest, code, t.Enabled)
	k.reg.Lock()
	f.reversible = !t.Enabled && t.Reversible
	f.requestedBy = t.RequestedBy
	f.failures, f.quarantine, f.caps = t.Failures, t.Quarantine, t.Capabilities
	k.reg.Unlock()
	return f
}

// mount installs or replaces an agent fiber; the caller holds k.mu.
func (k *Kernel) mount(ctx context.Context, m Manifest, code []byte, enabled bool) *fiber {
	k.reg.RLock()
	old := k.fibers[m.ID]
	k.reg.RUnlock()
	if old != nil {
		k.deactivateTree(ctx, old)
	}
	f := &fiber{id: m.ID, manifest: m.clone(), trust: TrustAgent, enabled: enabled, state: StateInactive,
		code: code, codeHash: HashCode(code)}
	if old != nil && !enabled {
		f.quarantine = old.quarantine // a new version of a quarantined plugin stays held by the quarantine
	}
	k.reg.Lock()
	if old != nil {
		k.removeLocked(old)
	}
	k.addLocked(f)
	k.reg.Unlock()
	return f
}

func (k *Kernel) wrapErr(op, id, what string, err error) error {
	code := CodeOf(err)
	if code == "" {
		code = CodeInternal
	}
	e := k.errf(code, op, id, what)
	e.Err = err
	return e
}

// usersOf names, as "plugin (key)", the enabled fibers other than f that
// inject a key f provides, or declares and nobody else provides: removing f
// leaves them without it.
func (k *Kernel) usersOf(f *fiber) []string {
	k.reg.RLock()
	defer k.reg.RUnlock()
	var out []string
	for _, key := range f.manifest.Provide {
		if e := k.keys[key]; e != nil && e.present && e.owner != f.id {
			continue
		}
		for _, c := range k.consumers[key] {
			if c != f && c.enabled {
				out = append(out, fmt.Sprintf("%s injects %s", c.id, key))
			}
		}
	}
	slices.Sort(out)
	return out
}
