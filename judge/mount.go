package judge

import (
	"context"
	"errors"
	"fmt"

	"github.com/sms-baseline/sms/kernel"
)

// mount mints an authorization, proposes the plugin and checks the
// invariants. A plugin that fails to activate or breaks an invariant is
// rolled back.
func (j *Judge) mount(ctx context.Context, s *epoch, sub *Submission, approval string) (Verdict, error) {
	m := sub.Manifest
	if err := s.supersede(ctx, m.ID, sub.CodeHash); err != nil {
		return Verdict{}, err
	}
	before := activeSystemFibers(s.api.Kernel)
	auth, err := s.api.Authorize(m, sub.CodeHash)
	if err != nil {
		return j.reject(ctx, s, sub, refusal{GateMount, err.Error()})
	}
	err = s.api.Propose(ctx, kernel.Proposal{Manifest: m, Code: []byte(sub.Code), Auth: auth})
	if err != nil {
		if !installed(s.api.Kernel, m, sub.CodeHash) {
			// Refused before anything changed (a reserved id, say).
			return j.reject(ctx, s, sub, refusal{GateMount, err.Error()})
		}
		return j.rollback(ctx, s, sub, refusal{GateMount, "activation failed: " + err.Error()})
	}
	if r := j.checkInvariants(ctx, s.api.Kernel, before); r.gate != "" {
		return j.rollback(ctx, s, sub, r)
	}
	key := submissionKey(m, sub.CodeHash)
	if err := s.record(ctx, EventMounted, m.ID, mountedEvent{Version: m.Version, CodeHash: sub.CodeHash, Key: key, ApprovalID: approval}); err != nil {
		return Verdict{}, err
	}
	s.mounted[m.ID] = key
	v := Verdict{Status: StatusMounted, PluginID: m.ID, Version: m.Version, CodeHash: sub.CodeHash, Gate: GateMount, ApprovalID: approval}
	if view, ok := s.api.Fiber(m.ID); ok && view.State != kernel.StateActive {
		v.Reason = "installed; it activates once every key in inject is provided"
	}
	j.opts.Logger.Info("Plugin mounted", "plugin", m.ID, "version", m.Version, "codeHash", sub.CodeHash)
	return v, nil
}

// installed reports whether the kernel now holds this version of the plugin.
func installed(k *kernel.Kernel, m kernel.Manifest, codeHash string) bool {
	v, ok := k.Fiber(m.ID)
	return ok && v.CodeHash == codeHash && v.Version == m.Version
}

func activeSystemFibers(k *kernel.Kernel) []string {
	var ids []string
	for _, f := range k.Fibers() {
		if f.Trust == kernel.TrustSystem && f.State == kernel.StateActive {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// checkInvariants checks, after a mount, that every system plugin active
// before still is, then every contributed invariant. It returns the failing
// gate ("invariant:<name>") and why, or a zero refusal.
func (j *Judge) checkInvariants(ctx context.Context, k *kernel.Kernel, before []string) refusal {
	for _, id := range before {
		if v, ok := k.Fiber(id); !ok || v.State != kernel.StateActive {
			return refusal{GateInvariant + ":system-plugins-active", fmt.Sprintf("system plugin %s is no longer active", id)}
		}
	}
	for _, c := range k.Contributions(InvariantPoint) {
		inv, ok := c.Item.(Invariant)
		if !ok {
			continue
		}
		err := j.runChecked(ctx, "invariant "+inv.Name, func(ctx context.Context) error { return inv.Check(ctx, k) })
		if err != nil {
			return refusal{GateInvariant + ":" + inv.Name, err.Error()}
		}
	}
	return refusal{}
}

// rollback undoes a mount: an update gets its previous version back from
// the event log and the blob store, a new plugin is uninstalled. The kernel
// is tainted either way.
func (j *Judge) rollback(ctx context.Context, s *epoch, sub *Submission, r refusal) (Verdict, error) {
	m := sub.Manifest
	s.api.Taint(kernel.TaintRollback)
	v := Verdict{Status: StatusRejected, PluginID: m.ID, Version: m.Version, CodeHash: sub.CodeHash, Gate: r.gate,
		Reason: r.reason, RolledBack: true}
	restored, err := j.restorePrevious(ctx, s.api, m.ID)
	if err != nil {
		v.Reason += "; the rollback failed: " + err.Error()
		j.opts.Logger.Error("Rollback failed", "plugin", m.ID, "error", err)
	}
	v.Restored = restored
	delete(s.mounted, m.ID)
	j.opts.Logger.Warn("Plugin rolled back", "plugin", m.ID, "gate", r.gate, "reason", r.reason, "restored", restored)
	return v, s.record(ctx, EventRolledBack, m.ID, verdictEvent{Version: m.Version, CodeHash: sub.CodeHash, Gate: r.gate,
		Reason: v.Reason, Restored: restored})
}

// restorePrevious puts back what the log says was installed before the
// latest plugin/installed of id, or uninstalls id if nothing was. It returns
// the restored version, or "".
func (j *Judge) restorePrevious(ctx context.Context, api *kernel.API, id string) (string, error) {
	events, err := readAll(ctx, api.Kernel)
	if err != nil {
		return "", err
	}
	last := -1
	for i := len(events) - 1; i >= 0 && last < 0; i-- {
		if events[i].Type == kernel.EventPluginInstalled && events[i].Plugin == id {
			last = i
		}
	}
	if last < 0 {
		return "", errors.New("the log has no installation to undo")
	}
	target, err := kernel.FoldTarget(events[:last])
	if err != nil {
		return "", err
	}
	prev, ok := target[id]
	if !ok || !prev.Installed || prev.Trust != kernel.TrustAgent {
		return "", api.Uninstall(ctx, id, false)
	}
	code, err := api.Code(ctx, prev.CodeHash)
	if err != nil {
		return "", err
	}
	auth, err := api.Authorize(prev.Manifest, prev.CodeHash)
	if err != nil {
		return "", err
	}
	err = api.Propose(ctx, kernel.Proposal{Manifest: prev.Manifest, Code: code, Auth: auth})
	if err == nil && !prev.Enabled {
		err = api.Disable(ctx, id)
	}
	return prev.Manifest.Version, err
}
