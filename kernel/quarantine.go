package kernel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// A plugin that keeps failing is quarantined: disabled in the log by a
// disable that holds (plugin/disabled with a quarantine reason), so only an
// admin's Enable starts it again, with TaintQuarantine on the kernel and
// the reason in its FiberView. Only an agent plugin whose install is
// committed is (a staged mount's failure is the judge's to undo), when
// Options.QuarantineAfter of its runs fail in a row:
//
//   - activations that fail, or never finish because the kernel's process
//     died during them. The log says so: the kernel writes
//     fiber/activating (with the code hash) before each agent activation
//     and fiber/activated or fiber/failed after it, so a restart that finds
//     an activation without its outcome counts a crash. A kernel that fails
//     to boot that many times because of a plugin boots without it;
//   - calls that stop its unit (ErrUnitStopped: its sandbox crashed, was
//     killed over a memory or CPU limit, ran past its deadline or its
//     bridge budget). A stopped unit can run nothing more, so the kernel
//     restarts the plugin at once (undo, then a fresh activation) and
//     counts the stop; a call that returns normally ends the count.
//
// What a caller causes is not counted: an activation or call whose caller
// left or timed out (ErrStoppedByCaller, or a context that ended), and an
// error a call returns (a plugin throws for input it refuses and for a
// caller's missing rights). A caller can still push a plugin past a limit
// with its input; then the count needs that many stops in a row with no
// call answered in between, and each stop restarts the plugin for
// everyone else.

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

// ErrStoppedByCaller marks a stop its caller caused (it cancelled the
// call, or its deadline ended it while the plugin's JavaScript ran):
// the kernel restarts the plugin but does not count the stop against it.
// Executors mark such errors with StoppedByCaller.
var ErrStoppedByCaller = errors.New("stopped because its caller left")

// StoppedByCaller returns err marked as ErrUnitStopped and
// ErrStoppedByCaller; its message is unchanged.
func StoppedByCaller(err error) error {
	if err == nil || errors.Is(err, ErrStoppedByCaller) {
		return err
	}
	return byCallerError{err}
}

type byCallerError struct{ error }

func (e byCallerError) Unwrap() []error { return []error{e.error, ErrUnitStopped, ErrStoppedByCaller} }

// Stopped returns err marked as ErrUnitStopped; its message is unchanged.
func Stopped(err error) error {
	if err == nil || errors.Is(err, ErrUnitStopped) {
		return err
	}
	return stoppedError{err}
}

type stoppedError struct{ error }

func (e stoppedError) Unwrap() []error { return []error{e.error, ErrUnitStopped} }

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
// quarantines it when its failures reached the limit; the caller holds
// k.mu (it runs inside settle, so it does not settle).
func (k *Kernel) failedActivation(ctx context.Context, f *fiber) {
	k.reg.Lock()
	f.failures++
	n, staged := f.failures, f.staged
	k.reg.Unlock()
	if f.trust == TrustAgent && !staged && n >= k.quarantineAfter() {
		k.quarantineLocked(ctx, f, fmt.Sprintf("quarantined: its last %d activations failed; the last: %v", n, f.err))
	}
}

// stoppedCall handles, from any goroutine, a call of f's activation gen
// that failed: when the error says its unit stopped, the kernel restarts
// f in the background (the call may run inside a kernel operation),
// counting the stop unless its caller caused it (callerLeft, or
// ErrStoppedByCaller), and quarantines f when the count reaches the limit.
func (k *Kernel) stoppedCall(f *fiber, gen uint64, err error, callerLeft bool) {
	if !errors.Is(err, ErrUnitStopped) {
		return
	}
	blame := !callerLeft && !errors.Is(err, ErrStoppedByCaller)
	k.reg.Lock()
	skip := f.gen != gen || f.staged || f.restarting || f.trust != TrustAgent
	if !skip {
		f.restarting = true
	}
	k.reg.Unlock()
	if skip {
		return
	}
	go k.restart(f, gen, err, blame)
}

// Restart backoff: the first restart after a stop runs at once; each
// further one in a row (no call answered between) waits twice as long as
// the one before, up to maxRestartBackoff, so a plugin that stops on every
// run (whoever is to blame) costs a restart every few minutes at most.
const (
	firstRestartBackoff = time.Second
	maxRestartBackoff   = 5 * time.Minute
)

func restartBackoff(n int32) time.Duration {
	if n <= 1 {
		return 0
	}
	d := firstRestartBackoff
	for i := int32(2); i < n && d < maxRestartBackoff; i++ {
		d *= 2
	}
	return min(d, maxRestartBackoff)
}

// restart undoes f's stopped activation gen and activates it afresh, after
// its backoff, or quarantines it when blame brings its stops to the limit.
// A closed kernel restarts nothing.
func (k *Kernel) restart(f *fiber, gen uint64, cause error, blame bool) {
	wait := restartBackoff(f.restarts.Add(1))
	if blame && int(f.stops.Load())+1 >= k.quarantineAfter() {
		wait = 0 // this stop quarantines: nothing to wait for
	}
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-k.closed:
			k.reg.Lock()
			f.restarting = false
			k.reg.Unlock()
			return
		}
	}
	ctx, err := k.lock(context.Background(), "restart")
	if err != nil {
		return
	}
	defer k.mu.Unlock()
	select {
	case <-k.closed:
		k.reg.Lock()
		f.restarting = false
		k.reg.Unlock()
		return
	default:
	}
	k.reg.Lock()
	f.restarting = false
	live := k.fibers[f.id] == f && f.gen == gen && f.enabled && !f.staged && f.state == StateActive
	n := int(f.stops.Load())
	if live && blame {
		n = int(f.stops.Add(1))
	}
	k.reg.Unlock()
	if !live {
		return
	}
	if n < k.quarantineAfter() || !k.quarantineLocked(ctx, f, fmt.Sprintf("quarantined: its sandbox stopped in %d calls in a row; the last: %v", n, cause)) {
		k.logger.Warn("Plugin restarted: its sandbox stopped", "kernel", k.name, "plugin", f.id, "stops", n, "error", cause)
		k.deactivateTree(ctx, f) // a quarantine the log refused restarts it too: the unit runs nothing more
	}
	_, _ = k.settle(ctx) // activates it again, and the plugins that inject its keys
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
