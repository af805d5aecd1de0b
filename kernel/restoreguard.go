package kernel

import (
	"context"
	"maps"
	"slices"
)

// EventPluginRestoreRefused is the audit event Restore appends for each
// agent plugin the log installs but Restore leaves out (restoreRefusedData).
const EventPluginRestoreRefused = "plugin/restore_refused"

// RestoreGuard vets the agent plugins the event log installs before Restore
// (or Abort, putting back a committed version) mounts them again. The judge
// carries one: a plugin whose declaration is sensitive needs an approval in
// the log. Only guards of installed system plugins are asked, whether or
// not they are active yet (Restore runs before they activate).
//
// VetRestore must not call the kernel: it runs while the kernel is locked.
type RestoreGuard interface {
	// VetRestore is given the log and the agent plugins it installs (by
	// id), and returns what it refuses and what it vouches for. Restore
	// gives it the whole log; Abort, putting back one plugin, gives it
	// that plugin's history (the events whose Plugin is its id).
	VetRestore(events []Event, targets map[string]Target) RestoreVetting
}

// RestoreVetting is a RestoreGuard's answer.
type RestoreVetting struct {
	// Refused says, by plugin id, why a plugin may not be mounted again.
	Refused map[string]string
	// Committed names plugins whose install has no plugin/mounted (Target
	// Committed is false) that the guard knows were committed another way:
	// logs written before plugin/mounted existed. Without a guard's word
	// such an install is refused.
	Committed map[string]bool
}

// restoreRefusedData is the payload of plugin/restore_refused.
type restoreRefusedData struct {
	Version  string `json:"version"`
	CodeHash string `json:"codeHash"`
	Reason   string `json:"reason"`
}

// notCommitted is why an install without a commit is refused.
const notCommitted = "no plugin/mounted commits this install and no restore guard vouches for it: it was never mounted through the judge"

// vetRestore returns, by plugin id, why each agent plugin of targets is
// refused: an install never committed (unless a guard vouches for it), or
// any guard's refusal. The caller holds k.mu.
func (k *Kernel) vetRestore(events []Event, targets map[string]Target) map[string]string {
	agents := map[string]Target{}
	for id, t := range targets {
		if t.Installed && t.Trust == TrustAgent {
			agents[id] = t
		}
	}
	refused, vouched := map[string]string{}, map[string]bool{}
	if len(agents) == 0 {
		return refused
	}
	for _, g := range k.restoreGuards() {
		v := g.VetRestore(events, maps.Clone(agents))
		for id, reason := range v.Refused {
			if _, seen := refused[id]; !seen {
				refused[id] = reason
			}
		}
		for id, ok := range v.Committed {
			vouched[id] = vouched[id] || ok
		}
	}
	for id, t := range agents {
		if _, seen := refused[id]; !seen && !t.Committed && !vouched[id] {
			refused[id] = notCommitted
		}
	}
	return refused
}

// restoreGuards returns the guards of installed system fibers, in install order.
func (k *Kernel) restoreGuards() []RestoreGuard {
	k.reg.RLock()
	defer k.reg.RUnlock()
	var out []RestoreGuard
	for _, f := range k.order {
		if f.trust == TrustSystem && f.guard != nil {
			out = append(out, f.guard)
		}
	}
	return out
}

// reportRefused records each refused plugin: a log line, the
// plugin/restore_refused audit event and the TaintRestoreRefused flag.
// The caller holds k.mu.
func (k *Kernel) reportRefused(ctx context.Context, refused map[string]string, targets map[string]Target) {
	for _, id := range slices.Sorted(maps.Keys(refused)) {
		t := targets[id]
		k.Taint(TaintRestoreRefused)
		k.logger.Warn("Plugin not restored", "kernel", k.name, "plugin", id, "version", t.Manifest.Version,
			"codeHash", t.CodeHash, "reason", refused[id])
		k.audit(ctx, EventPluginRestoreRefused, id, restoreRefusedData{Version: t.Manifest.Version, CodeHash: t.CodeHash, Reason: refused[id]})
	}
}
