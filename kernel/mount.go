package kernel

import (
	"context"
	"fmt"
)

// Fault points: the steps of a mount at which Options.Fault is called, in
// the order a mount passes them. A test arms one to stop the process there
// and checks that, after a restart, the plugin is either fully mounted or
// absent. System plugins name their own steps with Kernel.Fault.
const (
	FaultCodeStored = "propose/code-stored" // the code is in the blob store
	FaultInstalled  = "propose/installed"   // the staged plugin/installed is in the log
	FaultActivated  = "propose/activated"   // the staged fiber has settled
	FaultCommitted  = "commit/recorded"     // plugin/mounted is in the log
	FaultAborted    = "abort/recorded"      // plugin/aborted is in the log
)

// FaultPoints lists the kernel's fault points.
var FaultPoints = []string{FaultCodeStored, FaultInstalled, FaultActivated, FaultCommitted, FaultAborted}

// Fault calls Options.Fault with name, if one is set. The kernel calls it at
// its own fault points; system plugins call it at theirs.
func (k *Kernel) Fault(name string) {
	if k.faultFn != nil {
		k.faultFn(name)
	}
}

// Commit records that the staged mount of id with this code hash passed
// (plugin/mounted): from then on Restore brings it back. Only the code that
// proposed the plugin (the judge) commits it, once the mount and every
// invariant have passed.
func (k *Kernel) Commit(ctx context.Context, id, codeHash string) error {
	ctx, err := k.lock(ctx, "commit")
	if err != nil {
		return err
	}
	defer k.mu.Unlock()
	f, err := k.stagedFiber("commit", id, codeHash)
	if err != nil {
		return err
	}
	data := mountedData{CodeHash: codeHash, Declaration: f.manifest.Declaration()}
	if err := k.appendEvent(ctx, EventPluginMounted, id, data); err != nil {
		return err
	}
	k.reg.Lock()
	f.staged = false
	k.reg.Unlock()
	k.commitTransition(ctx, id, codeHash)
	k.Fault(FaultCommitted)
	return nil
}

// Abort discards the staged mount of id with this code hash: it records
// plugin/aborted with the reason, then puts back what the plugin's own
// history in the log (PluginEventReader) has committed for id (its previous version, enabled or disabled as it was),
// or removes the plugin when nothing was (or what was is refused, as
// Restore refuses it: see RestoreGuard). It returns the version put back,
// or "". An error of the version put back (it failed to activate again)
// is returned with it.
func (k *Kernel) Abort(ctx context.Context, id, codeHash, reason string) (string, error) {
	ctx, err := k.lock(ctx, "abort")
	if err != nil {
		return "", err
	}
	defer k.mu.Unlock()
	f, err := k.stagedFiber("abort", id, codeHash)
	if err != nil {
		return "", err
	}
	if err := k.appendEvent(ctx, EventPluginAborted, id, abortedData{CodeHash: codeHash, Reason: reason}); err != nil {
		return "", err
	}
	k.Fault(FaultAborted)
	tr := k.openTransition(id, codeHash)
	events, err := k.pluginHistory(ctx, id)
	if err != nil {
		return "", err
	}
	folded, err := Fold(events)
	if err != nil {
		return "", k.wrapErr("abort", id, "fold the plugin's events", err)
	}
	t, ok := folded.Targets[id]
	if refused := k.vetRestore(events, map[string]Target{id: t}); ok && refused[id] != "" {
		k.reportRefused(ctx, refused, folded.Targets)
		ok = false
	}
	back := ok && t.Installed && t.Trust == TrustAgent
	var code []byte
	if back {
		if code, err = k.committedCode(ctx, id, t.CodeHash); err != nil {
			return "", err
		}
	}
	if tr != nil { // from here nothing fails before the staged version is undone
		k.markDraining(tr, f) // its calls finish on it
		defer k.endTransition(ctx, tr, PhaseAborted, reason)
	}
	if !back {
		k.deactivateTree(ctx, f)
		k.reg.Lock()
		k.removeLocked(f)
		k.reg.Unlock()
		_, err := k.settle(ctx)
		return "", err
	}
	return t.Manifest.Version, k.settleFor(ctx, k.mountTarget(ctx, t, code))
}

// stagedFiber returns id's fiber if it holds a staged mount of codeHash;
// the caller holds k.mu.
func (k *Kernel) stagedFiber(op, id, codeHash string) (*fiber, error) {
	k.reg.RLock()
	defer k.reg.RUnlock()
	f := k.fibers[id]
	if f == nil || !f.staged || f.codeHash != codeHash {
		return nil, k.errfLocked(CodeLifecycle, op, id, fmt.Sprintf("no staged mount of %s with code %s", id, codeHash))
	}
	return f, nil
}

// committedCode fetches code from the blob store and checks its hash.
func (k *Kernel) committedCode(ctx context.Context, id, hash string) ([]byte, error) {
	code, err := k.blobs.Get(ctx, hash)
	if err != nil {
		return nil, k.wrapErr("restore", id, "fetch code "+hash, err)
	}
	if got := HashCode(code); got != hash {
		return nil, k.errf(CodeValidation, "restore", id, fmt.Sprintf("blob store returned code hashing to %s, want %s", got, hash))
	}
	return code, nil
}
