package kernel

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// Transition phases. A transition replaces the active version of an agent
// plugin with a proposed one: it begins in Propose (PhaseTransitioning),
// ends PhaseComplete once the new version is committed and every call that
// started on the old one has ended, or PhaseAborted when the staged
// version is aborted (the old version is back, through the new one's
// undo).
const (
	PhaseTransitioning = "transitioning"
	PhaseComplete      = "complete"
	PhaseAborted       = "aborted"
)

// Transition audit events: began, completed and aborted, with
// transitionData.
const (
	EventTransitionBegan     = "fiber/transition_began"
	EventTransitionCompleted = "fiber/transition_completed"
	EventTransitionAborted   = "fiber/transition_aborted"
)

// Default drain timings (Options.DrainGrace, Options.DrainTimeout), and
// MaxDraining, how many replaced activations of one plugin may drain at
// once: a transition past it closes the oldest at once, under its calls.
const (
	DefaultDrainGrace   = time.Second
	DefaultDrainTimeout = 30 * time.Second
	MaxDraining         = 4
)

// TransitionView is a snapshot of a plugin's latest transition.
type TransitionView struct {
	Plugin      string    `json:"plugin"`
	FromVersion string    `json:"fromVersion"`
	From        string    `json:"from"` // code hash of the version replaced
	ToVersion   string    `json:"toVersion"`
	To          string    `json:"to"` // code hash of the version proposed
	Phase       string    `json:"phase"`
	Began       time.Time `json:"began"`
	Ended       time.Time `json:"ended,omitzero"`
	// Switched: the new version answers new work; Committed: it is in the log.
	Switched  bool `json:"switched"`
	Committed bool `json:"committed"`
	// Draining counts the replaced activations still open and InFlight the
	// calls running in them.
	Draining int    `json:"draining"`
	InFlight int    `json:"inFlight"`
	Reason   string `json:"reason,omitempty"`
}

// transition is a plugin's latest transition; guarded by Kernel.reg.
type transition struct {
	view    TransitionView
	drains  []*activation
	pending int // drains started and not yet closed
	started int // drains started
}

type transitionData struct {
	From        string `json:"from"`
	FromVersion string `json:"fromVersion"`
	To          string `json:"to"`
	ToVersion   string `json:"toVersion"`
	Reason      string `json:"reason,omitempty"`
}

func (t *transition) data() transitionData {
	return transitionData{From: t.view.From, FromVersion: t.view.FromVersion, To: t.view.To, ToVersion: t.view.ToVersion,
		Reason: t.view.Reason}
}

// Transition returns id's latest transition.
func (k *Kernel) Transition(id string) (TransitionView, bool) {
	k.reg.RLock()
	t := k.trans[id]
	k.reg.RUnlock()
	if t == nil {
		return TransitionView{}, false
	}
	return k.transitionView(t), true
}

// Transitions returns every plugin's latest transition, open ones first.
func (k *Kernel) Transitions() []TransitionView {
	k.reg.RLock()
	all := make([]*transition, 0, len(k.trans))
	for _, t := range k.trans {
		all = append(all, t)
	}
	k.reg.RUnlock()
	out := make([]TransitionView, 0, len(all))
	for _, t := range all {
		out = append(out, k.transitionView(t))
	}
	sortTransitions(out)
	return out
}

func (k *Kernel) transitionView(t *transition) TransitionView {
	k.reg.RLock()
	v, drains := t.view, t.drains
	k.reg.RUnlock()
	for _, a := range drains {
		if a.serving() {
			v.Draining++
			v.InFlight += a.calls()
		}
	}
	return v
}

// beginTransition starts replacing id's active agent version with m (code
// hash): it marks the activations of the old version and of the fibers
// that depend on it draining, before they are deactivated. It returns nil
// when id has no active agent version. The caller holds k.mu.
func (k *Kernel) beginTransition(ctx context.Context, m Manifest, hash string) *transition {
	k.reg.RLock()
	old := k.fibers[m.ID]
	prev := k.trans[m.ID]
	k.reg.RUnlock()
	if prev != nil && k.uncommitted(prev) {
		k.endTransition(ctx, prev, PhaseAborted, "superseded by version "+m.Version)
	}
	if old == nil || old.trust != TrustAgent || old.state != StateActive {
		return nil
	}
	t := &transition{view: TransitionView{Plugin: m.ID, FromVersion: old.manifest.Version, From: old.codeHash,
		ToVersion: m.Version, To: hash, Phase: PhaseTransitioning, Began: k.now().UTC()}}
	k.markDraining(t, old)
	k.reg.Lock()
	k.trans[m.ID] = t
	k.reg.Unlock()
	k.audit(context.WithoutCancel(ctx), EventTransitionBegan, m.ID, t.data())
	return t
}

// markDraining marks the activations of root and of its active dependents
// draining, for t.
func (k *Kernel) markDraining(t *transition, root *fiber) {
	for _, f := range k.dependentsFirst(root) {
		k.reg.RLock()
		a, active := f.act, f.state == StateActive
		snap := map[string]any{}
		for _, key := range slices.Concat(f.manifest.Inject, f.manifest.Optional) {
			if e := k.keys[key]; e != nil && e.present {
				snap[key] = e.value
			}
		}
		k.reg.RUnlock()
		if a != nil && active && a.drainable(snap) {
			k.reg.Lock()
			t.drains = append(t.drains, a)
			k.draining[f.id] = k.boundDrains(append(k.draining[f.id], a))
			k.reg.Unlock()
		}
	}
}

// boundDrains drops the closed activations of one plugin's draining list
// and forces the oldest past MaxDraining to close; the caller holds k.reg.
func (k *Kernel) boundDrains(list []*activation) []*activation {
	list = slices.DeleteFunc(list, func(a *activation) bool { return !a.serving() })
	for len(list) > MaxDraining {
		list[0].force()
		list = list[1:]
	}
	if len(list) == 0 {
		return nil
	}
	return list
}

// switchTransition lets t's new version take new work: it delivers the
// held-back notifications of the replaced activations and starts their
// drains. The caller holds k.mu.
func (k *Kernel) switchTransition(t *transition) {
	k.reg.Lock()
	t.view.Switched = true
	drains := t.drains[t.started:]
	t.started = len(t.drains)
	t.pending += len(drains)
	k.reg.Unlock()
	for _, a := range drains {
		a.flush()
	}
	for _, a := range drains {
		go k.drainActivation(t, a)
	}
}

func (k *Kernel) drainActivation(t *transition, a *activation) {
	if err := a.drain(k.drainGrace, k.drainTimeout, k.closed); err != nil {
		k.logger.Warn("Closing a replaced unit failed", "kernel", k.name, "plugin", t.view.Plugin, "error", err)
	}
	k.reg.Lock()
	if k.draining[t.view.Plugin] = k.boundDrains(k.draining[t.view.Plugin]); k.draining[t.view.Plugin] == nil {
		delete(k.draining, t.view.Plugin)
	}
	t.pending--
	done := t.pending == 0 && t.view.Phase == PhaseTransitioning && t.view.Committed
	if done {
		t.view.Phase, t.view.Ended = PhaseComplete, k.now().UTC()
	}
	k.reg.Unlock()
	if done {
		k.audit(context.Background(), EventTransitionCompleted, t.view.Plugin, t.data())
	}
}

// commitTransition notes that id's staged version hash is committed; the
// transition completes now if its drains have ended.
func (k *Kernel) commitTransition(ctx context.Context, id, hash string) {
	k.reg.Lock()
	t := k.trans[id]
	if t == nil || t.view.Phase != PhaseTransitioning || t.view.To != hash {
		k.reg.Unlock()
		return
	}
	t.view.Committed = true
	switched := t.view.Switched
	done := switched && t.pending == 0 && t.started == len(t.drains)
	if done {
		t.view.Phase, t.view.Ended = PhaseComplete, k.now().UTC()
	}
	k.reg.Unlock()
	if !switched {
		k.switchTransition(t) // a failed staged version committed: the old one stops serving
	}
	if done {
		k.audit(context.WithoutCancel(ctx), EventTransitionCompleted, id, t.data())
	}
}

// endTransition ends t as aborted (or superseded): everything it held back
// is delivered and its drains start. The caller holds k.mu.
func (k *Kernel) endTransition(ctx context.Context, t *transition, phase, reason string) {
	k.switchTransition(t)
	k.reg.Lock()
	t.view.Phase, t.view.Reason, t.view.Ended = phase, reason, k.now().UTC()
	k.reg.Unlock()
	k.audit(context.WithoutCancel(ctx), EventTransitionAborted, t.view.Plugin, t.data())
}

// uncommitted reports whether t is open and its new version is not
// committed: such a transition ends as aborted when something replaces or
// removes the plugin. A committed one completes when its drains end.
func (k *Kernel) uncommitted(t *transition) bool {
	k.reg.RLock()
	defer k.reg.RUnlock()
	return t.view.Phase == PhaseTransitioning && !t.view.Committed
}

// endOpen ends id's uncommitted transition as aborted, for reason (the
// plugin is disabled or uninstalled). The caller holds k.mu.
func (k *Kernel) endOpen(ctx context.Context, id, reason string) {
	k.reg.RLock()
	t := k.trans[id]
	k.reg.RUnlock()
	if t != nil && k.uncommitted(t) {
		k.endTransition(ctx, t, PhaseAborted, reason)
	}
}

// closeDrains makes every draining activation close now: the kernel is
// closing. The caller holds nothing.
func (k *Kernel) closeDrains() {
	k.reg.RLock()
	var all []*activation
	for _, list := range k.draining {
		all = append(all, list...)
	}
	for _, t := range k.trans {
		all = append(all, t.drains...)
	}
	k.reg.RUnlock()
	for _, a := range all {
		a.force()
	}
}

// openTransition returns id's transition to hash while it is open.
func (k *Kernel) openTransition(id, hash string) *transition {
	k.reg.RLock()
	defer k.reg.RUnlock()
	t := k.trans[id]
	if t == nil || t.view.Phase != PhaseTransitioning || t.view.To != hash {
		return nil
	}
	return t
}

// AbortTransition aborts id's open transition: the staged version is
// aborted (Abort) with reason, and the version it replaced takes new work
// again. It fails with CodeLifecycle when id has no open transition, or its
// new version is already committed.
func (k *Kernel) AbortTransition(ctx context.Context, id, reason string) (string, error) {
	k.reg.RLock()
	var v TransitionView
	if t := k.trans[id]; t != nil {
		v = t.view
	}
	k.reg.RUnlock()
	if v.Phase != PhaseTransitioning {
		return "", k.errf(CodeLifecycle, "abort", id, "no transition of "+id+" is in progress")
	}
	if v.Committed {
		return "", k.errf(CodeLifecycle, "abort", id, fmt.Sprintf(
			"version %s is committed; its transition completes when the calls on version %s end", v.ToVersion, v.FromVersion))
	}
	return k.Abort(ctx, id, v.To, reason)
}

// sortTransitions orders open transitions first, then the newest first.
func sortTransitions(v []TransitionView) {
	slices.SortFunc(v, func(a, b TransitionView) int {
		ao, bo := a.Phase == PhaseTransitioning, b.Phase == PhaseTransitioning
		if ao != bo {
			if ao {
				return -1
			}
			return 1
		}
		return cmp.Or(b.Began.Compare(a.Began), cmp.Compare(a.Plugin, b.Plugin))
	})
}

// Committed returns the manifest and code hash of id's committed agent
// version, the one a new version would replace; ok is false for an id
// with none (not installed, a system plugin, or only a staged mount).
func (k *Kernel) Committed(id string) (m Manifest, codeHash string, ok bool) {
	k.reg.RLock()
	defer k.reg.RUnlock()
	f := k.fibers[id]
	if f == nil || f.trust != TrustAgent || f.staged {
		return Manifest{}, "", false
	}
	return f.manifest.clone(), f.codeHash, true
}
