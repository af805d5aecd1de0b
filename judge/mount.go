package judge

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/kernel"
)

// The judge's fault points (see kernel.Options.Fault), in the order a
// submission passes them.
const (
	FaultSubmitted   = "judge/submitted"         // judge/submitted is in the log
	FaultGatesPassed = "judge/gates-passed"      // every gate passed; nothing is mounted yet
	FaultInvariants  = "judge/invariants-passed" // the staged mount passed its invariants
	FaultMounted     = "judge/mounted"           // judge/mounted is in the log
)

// FaultPoints lists the judge's fault points.
var FaultPoints = []string{FaultSubmitted, FaultGatesPassed, FaultInvariants, FaultMounted}

// mount mints an authorization, proposes the plugin (a staged mount),
// checks the invariants and commits it. A plugin that fails to activate or
// breaks an invariant is rolled back: the staged mount is aborted.
func (j *Judge) mount(ctx context.Context, s *epoch, sub *Submission, approval string) (Verdict, error) {
	m := sub.Manifest
	if err := s.supersede(ctx, m.ID); err != nil {
		return Verdict{}, err
	}
	before := activeSystemFibers(s.api.Kernel)
	auth, err := s.api.Authorize(m, sub.CodeHash)
	if err != nil {
		return j.reject(ctx, s, sub, refusal{GateMount, err.Error()})
	}
	// The executor may bound what one requester holds (kernel.RequesterOf).
	err = s.api.Propose(kernel.WithRequester(ctx, sub.RequestedBy), kernel.Proposal{Manifest: m, Code: []byte(sub.Code), Auth: auth,
		Capabilities: sub.Capabilities})
	if err != nil {
		if !staged(s.api.Kernel, m.ID, sub.CodeHash) {
			// Refused before anything changed (a reserved id, say).
			return j.reject(ctx, s, sub, refusal{GateMount, err.Error()})
		}
		return j.rollback(ctx, s, sub, refusal{GateMount, "activation failed: " + err.Error()})
	}
	if r := j.checkInvariants(ctx, s.api.Kernel, before); r.gate != "" {
		return j.rollback(ctx, s, sub, r)
	}
	s.api.Fault(FaultInvariants)
	if err := s.api.Commit(ctx, m.ID, sub.CodeHash); err != nil {
		return j.rollback(ctx, s, sub, refusal{GateMount, "commit failed: " + err.Error()})
	}
	key := submissionKey(m, sub.CodeHash)
	if err := s.record(ctx, EventMounted, m.ID, mountedEvent{Version: m.Version, CodeHash: sub.CodeHash, Key: key, ApprovalID: approval}); err != nil {
		return Verdict{}, err
	}
	s.api.Fault(FaultMounted)
	s.mounted[m.ID] = key
	v := Verdict{Status: StatusMounted, PluginID: m.ID, Version: m.Version, CodeHash: sub.CodeHash, Gate: GateMount, ApprovalID: approval}
	v.Reason = mountedReason(s.api.Kernel, m.ID)
	j.opts.Logger.Info("Plugin mounted", "plugin", m.ID, "version", m.Version, "codeHash", sub.CodeHash)
	return v, nil
}

// mountedReason says why a plugin just mounted is not active, or "": an
// admin's disable holds (the kernel installs it disabled), or a key it
// injects is missing.
func mountedReason(k *kernel.Kernel, id string) string {
	view, ok := k.Fiber(id)
	switch {
	case ok && view.Held:
		return "installed disabled: " + id + " was disabled by an admin, and stays disabled until an admin enables it"
	case ok && view.State != kernel.StateActive:
		return "installed; it activates once every key in inject is provided"
	}
	return ""
}

// staged reports whether the kernel holds a staged mount of this code.
func staged(k *kernel.Kernel, id, codeHash string) bool {
	v, ok := k.Fiber(id)
	return ok && v.Staged && v.CodeHash == codeHash
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

// rollback undoes a staged mount: the kernel aborts it, which puts back
// the version the log has committed (an update's previous version, enabled
// or disabled as it was) or removes a new plugin. The kernel is tainted
// either way. The abort runs even when ctx was cancelled mid-mount.
func (j *Judge) rollback(ctx context.Context, s *epoch, sub *Submission, r refusal) (Verdict, error) {
	m := sub.Manifest
	s.api.Taint(kernel.TaintRollback)
	v := Verdict{Status: StatusRejected, PluginID: m.ID, Version: m.Version, CodeHash: sub.CodeHash, Gate: r.gate,
		Reason: r.reason, RolledBack: true}
	ctx = context.WithoutCancel(ctx)
	restored, err := s.api.Abort(ctx, m.ID, sub.CodeHash, r.gate+": "+r.reason)
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
