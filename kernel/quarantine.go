package kernel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// A plugin that keeps failing is quarantined: disabled in the log by a
// disable that holds (plugin/disabled with a quarantine reason), so only an
// admin's Enable starts it again, with TaintQuarantine on the kernel and
// the reason in its FiberView. Two things quarantine an agent plugin whose
// install is committed (a staged mount's failure is the judge's to undo):
//
//   - its unit stops (ErrUnitStopped: its sandbox crashed, was killed over
//     a memory or CPU limit, or ran past its deadline), in an activation or
//     a call: from then on every call would fail;
//   - Options.QuarantineAfter activations in a row fail or never finish
//     because the kernel's process died during them. The log says so:
//     the kernel writes fiber/activating before each agent activation and
//     fiber/activated or fiber/failed after it, so a restart that finds an
//     activation without its outcome counts a crash. A kernel that fails
//     to boot that many times because of a plugin boots without it.
//
// An error a call returns is not a failure here: a plugin's code throws for
// input it refuses and for a caller's missing rights, so counting throws
// would let any caller quarantine a plugin other people use.

// DefaultQuarantineAfter is how many activations of a plugin may fail in a
// row before it is quarantined.
const DefaultQuarantineAfter = 3

// EventFiberActivating is the audit event written before an agent fiber's
// activation runs; its outcome follows as fiber/activated or fiber/failed.
const EventFiberActivating = "fiber/activating"

// ErrUnitStopped marks the errors of an executor unit that can run nothing
// more: its sandbox crashed or was killed, or its runtime was stopped after
// an error no script can catch. Executors mark such errors with Stopped.
var ErrUnitStopped = errors.New("the plugin's sandbox stopped")

// Stopped returns err marked as ErrUnitStopped; its message is unchanged.
func Stopped(err error) error {
	if err == nil || errors.Is(err, ErrUnitStopped) {
		return err
	}
	return stoppedError{err}
}

type stoppedError struct{ error }

func (e stoppedError) Unwrap() []error { return []error{e.error, ErrUnitStopped} }

// streaks counts, per plugin, its activations that failed in a row as the
// log tells them. An activation is open between fiber/activating and its
// outcome; one still open at the next fiber/activating, or at the end of
// the log, was cut short by the process dying.
type streaks struct {
	failed  map[string]int
	crashed map[string]int
	open    map[string]bool
}

func (s *streaks) reset(id string) {
	delete(s.failed, id)
	delete(s.crashed, id)
	delete(s.open, id)
}

// closeOpen counts an activation of id left open as a crash.
func (s *streaks) closeOpen(id string) {
	if s.open[id] {
		s.failed[id]++
		s.crashed[id]++
		delete(s.open, id)
	}
}

// apply folds one fiber/* event.
func (s *streaks) apply(e Event) {
	if s.failed == nil {
		s.failed, s.crashed, s.open = map[string]int{}, map[string]int{}, map[string]bool{}
	}
	switch e.Type {
	case EventFiberActivating:
		s.closeOpen(e.Plugin)
		s.open[e.Plugin] = true
	case EventFiberActivated:
		s.reset(e.Plugin)
	case EventFiberFailed:
		delete(s.open, e.Plugin)
		s.failed[e.Plugin]++
	}
}

// finish closes every open activation and writes the counts into targets.
func (s *streaks) finish(targets map[string]Target) {
	for _, id := range slices.Collect(maps.Keys(s.open)) {
		s.closeOpen(id)
	}
	for id, t := range targets {
		t.Failures, t.Crashes = s.failed[id], s.crashed[id]
		targets[id] = t
	}
}

// quarantineAfter returns the configured limit.
func (k *Kernel) quarantineAfter() int {
	if k.quarantineN > 0 {
		return k.quarantineN
	}
	return DefaultQuarantineAfter
}

// quarantineAtBoot quarantines, before Restore mounts them, the enabled
// agent plugins whose last activations failed in a row QuarantineAfter
// times, and taints the kernel for those quarantined before; the caller
// holds k.mu. Safe mode activates no agent plugin and records nothing for
// one, so it quarantines nothing.
func (k *Kernel) quarantineAtBoot(ctx context.Context, targets map[string]Target) error {
	for _, id := range slices.Sorted(maps.Keys(targets)) {
		t := targets[id]
		if t.Quarantine != "" && !t.Enabled {
			k.Taint(TaintQuarantine) // quarantined before this boot
		}
		if k.safeMode || !t.Enabled || t.Trust != TrustAgent || t.Failures < k.quarantineAfter() {
			continue
		}
		reason := fmt.Sprintf("quarantined: its last %d activations failed", t.Failures)
		if t.Crashes > 0 {
			reason += fmt.Sprintf(", %d of them stopping the kernel before they finished", t.Crashes)
		}
		if err := k.appendEvent(ctx, EventPluginDisabled, id, disabledData{Quarantine: reason}); err != nil {
			return err
		}
		k.noteQuarantine(id, reason)
		t.Enabled, t.Reversible, t.Quarantine = false, false, reason
		targets[id] = t
	}
	return nil
}

// noteQuarantine taints the kernel and logs the quarantine of id.
func (k *Kernel) noteQuarantine(id, reason string) {
	k.Taint(TaintQuarantine)
	k.logger.Warn("Plugin quarantined", "kernel", k.name, "plugin", id, "reason", reason)
}

// failedActivation counts an agent fiber's failed activation and
// quarantines it when its unit stopped or its failures reached the limit;
// the caller holds k.mu (it runs inside settle, so it does not settle).
func (k *Kernel) failedActivation(ctx context.Context, f *fiber, err error) {
	k.reg.Lock()
	f.failures++
	n, staged := f.failures, f.staged
	k.reg.Unlock()
	if f.trust != TrustAgent || staged {
		return
	}
	switch {
	case errors.Is(err, ErrUnitStopped):
		k.quarantineLocked(ctx, f, "quarantined: its sandbox stopped while it activated: "+err.Error())
	case n >= k.quarantineAfter():
		k.quarantineLocked(ctx, f, fmt.Sprintf("quarantined: its last %d activations failed; the last: %v", n, err))
	}
}

// stoppedCall quarantines f, from any goroutine, when a call of its
// activation gen failed because its unit stopped. It runs the quarantine
// in the background: the call may run inside a kernel operation.
func (k *Kernel) stoppedCall(f *fiber, gen uint64, err error) {
	if !errors.Is(err, ErrUnitStopped) {
		return
	}
	k.reg.Lock()
	skip := f.gen != gen || f.staged || f.quarantining || f.trust != TrustAgent
	f.quarantining = true
	k.reg.Unlock()
	if skip {
		return
	}
	go func() {
		ctx, lerr := k.lock(context.Background(), "quarantine")
		if lerr != nil {
			return
		}
		defer k.mu.Unlock()
		k.reg.Lock()
		f.quarantining = false
		live := k.fibers[f.id] == f && f.gen == gen && f.enabled && !f.staged
		k.reg.Unlock()
		if live && k.quarantineLocked(ctx, f, "quarantined: its sandbox stopped during a call: "+err.Error()) {
			_, _ = k.settle(ctx) // deactivates it and the plugins that inject its keys
		}
	}()
}

// quarantineLocked records f's quarantine and disables it; the caller
// holds k.mu and settles. It reports whether f was quarantined (a failed
// log write leaves it as it was).
func (k *Kernel) quarantineLocked(ctx context.Context, f *fiber, reason string) bool {
	if err := k.appendEvent(ctx, EventPluginDisabled, f.id, disabledData{Quarantine: reason}); err != nil {
		k.logger.Error("Quarantine not recorded", "kernel", k.name, "plugin", f.id, "reason", reason, "error", err)
		return false
	}
	k.holds[f.id] = true
	k.reg.Lock()
	f.enabled, f.reversible, f.quarantine = false, false, reason
	k.reg.Unlock()
	k.noteQuarantine(f.id, reason)
	return true
}
