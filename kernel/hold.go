package kernel

import (
	"context"
	"fmt"
)

// A disable holds unless it was made with DisableReversibly: the admin API
// disables with Disable, and only Enable (which the admin API reaches with
// the admin scope) undoes that. The chat agent, acting for a caller without
// the admin scope, disables with DisableReversibly and enables with
// EnableReversible, which refuses to undo a disable that holds. Whether a
// disable holds is in the log (plugin/disabled's data), so it survives a
// restart; a plugin/disabled without data (every disable before) holds.
// A disable that holds also binds what is mounted after it under the same
// id: Propose installs the new version disabled and held, and the log folds
// the same way, so neither a submission in flight when an admin disabled
// the plugin nor an approval decided after it enables it again.

// toggle is what setEnabled does.
type toggle struct {
	enabled    bool
	force      bool   // system fibers too (ForceDisable)
	reversible bool   // DisableReversibly or EnableReversible
	by         string // who disabled reversibly, for the log
}

// disabledData is the payload of a reversible plugin/disabled, and of
// the kernel's quarantine of a plugin (a disable that holds).
type disabledData struct {
	By         string `json:"by,omitempty"`
	Reversible bool   `json:"reversible,omitempty"`
	Quarantine string `json:"quarantine,omitempty"`
}

// data is the event payload of t: only a reversible disable has one.
func (t toggle) data() any {
	if t.enabled || !t.reversible {
		return nil
	}
	return disabledData{By: t.by, Reversible: true}
}

// DisableReversibly disables an agent fiber like Disable, recording that
// by did it and that EnableReversible may undo it. A fiber already disabled
// by a disable that holds stays held (nothing is recorded).
func (k *Kernel) DisableReversibly(ctx context.Context, id, by string) error {
	return k.setEnabled(ctx, id, toggle{reversible: true, by: by})
}

// EnableReversible enables a fiber like Enable, unless its disable holds
// (FiberView.Held): then it is CodeForbidden, naming who may enable it.
func (k *Kernel) EnableReversible(ctx context.Context, id string) error {
	return k.setEnabled(ctx, id, toggle{enabled: true, reversible: true})
}

// checkReversible applies a reversible toggle's rule to f: an enable of a
// held fiber is refused, and a disable of one changes nothing (skip). The
// caller holds k.mu.
func (k *Kernel) checkReversible(f *fiber, t toggle) (skip bool, err error) {
	k.reg.RLock()
	held := !f.enabled && !f.reversible
	k.reg.RUnlock()
	switch {
	case !t.reversible || !held:
		return false, nil
	case t.enabled:
		return false, k.errf(CodeForbidden, "enable", f.id, fmt.Sprintf(
			"%s was disabled by an admin: only a caller with the admin scope may enable it again", f.id))
	}
	return true, nil
}

// held reports whether t is disabled by a disable that holds.
func (t Target) held() bool { return !t.Enabled && !t.Reversible }

// setHolds records which agent ids the folded log says are held; the
// caller holds k.mu.
func (k *Kernel) setHolds(targets map[string]Target) {
	k.holds = map[string]bool{}
	for id, t := range targets {
		if t.held() && !k.isSystemID(id) {
			k.holds[id] = true
		}
	}
}

// noteHold records whether toggle t, just logged for f, leaves f held; the
// caller holds k.mu.
func (k *Kernel) noteHold(f *fiber, t toggle) {
	if !t.enabled && !t.reversible && f.trust == TrustAgent {
		k.holds[f.id] = true
	} else {
		delete(k.holds, f.id)
	}
}

// heldLocked reports whether a disable that holds binds id: its fiber's or,
// when it has none (a mount aborted, a restore refused), the log's. The
// caller holds k.mu.
func (k *Kernel) heldLocked(id string) bool {
	k.reg.RLock()
	defer k.reg.RUnlock()
	if f := k.fibers[id]; f != nil && f.trust == TrustAgent {
		return !f.enabled && !f.reversible
	}
	return k.holds[id]
}
