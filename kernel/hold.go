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

// toggle is what setEnabled does.
type toggle struct {
	enabled    bool
	force      bool   // system fibers too (ForceDisable)
	reversible bool   // DisableReversibly or EnableReversible
	by         string // who disabled reversibly, for the log
}

// disabledData is the payload of a reversible plugin/disabled.
type disabledData struct {
	By         string `json:"by,omitempty"`
	Reversible bool   `json:"reversible,omitempty"`
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
