package kernel

import (
	"cmp"
	"context"
	"errors"
	"slices"
)

// restorePage is how many events Restore reads per call to the log.
const restorePage = 1000

// Restore brings the kernel to the state the event log describes and
// settles. Agent plugins are re-created from the log's committed installs,
// their code fetched from the blob store by hash; a staged install that was
// never committed (the process stopped mid-mount) is closed with
// plugin/aborted and ignored, so a plugin is either fully mounted or absent.
// An agent install the log has no commit for (a hand-written row, or a log
// written before commits, unless a RestoreGuard vouches for it) and one a
// RestoreGuard refuses are left out and reported: a log line, the
// plugin/restore_refused event and TaintRestoreRefused.
// System plugins, which the composition root installs before calling
// Restore, stay enabled whatever the log says (a log that says otherwise
// taints the kernel with TaintSystemDisableIgnored), and are recorded as
// installed the first time the log sees them (or a new version). Fibers that
// fail to activate stay failed and their errors are returned joined; the
// rest of the kernel is restored regardless.
func (k *Kernel) Restore(ctx context.Context) error {
	ctx, err := k.lock(ctx, "restore")
	if err != nil {
		return err
	}
	defer k.mu.Unlock()
	folded, events, err := k.readFold(ctx)
	if err != nil {
		return err
	}
	if err := k.abortStaged(ctx, folded.Staged); err != nil {
		return err
	}
	target := folded.Targets
	if err := k.quarantineAtBoot(ctx, target); err != nil {
		return err
	}
	k.setHolds(target)
	refused := k.vetRestore(events, target)
	k.reportRefused(ctx, refused, target)
	ids := make([]string, 0, len(target))
	for id := range target {
		if _, no := refused[id]; !no {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(target[a].Seq, target[b].Seq) })
	for _, id := range ids {
		if err := k.restoreOne(ctx, id, target[id]); err != nil {
			return err
		}
	}
	if err := k.recordSystemInstalls(ctx, target); err != nil {
		return err
	}
	failed, err := k.settle(ctx)
	if err != nil {
		return err
	}
	return errors.Join(failed...)
}

// abortedOnRestore is the reason recorded for a staged install a restart found.
const abortedOnRestore = "the mount never completed: the kernel stopped before it was committed"

// abortStaged closes every staged install with plugin/aborted; the caller
// holds k.mu.
func (k *Kernel) abortStaged(ctx context.Context, staged map[string]Target) error {
	ids := make([]string, 0, len(staged))
	for id := range staged {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		t := staged[id]
		k.logger.Warn("Plugin mount discarded on restore", "kernel", k.name, "plugin", id,
			"version", t.Manifest.Version, "codeHash", t.CodeHash, "reason", abortedOnRestore)
		if err := k.appendEvent(ctx, EventPluginAborted, id, abortedData{CodeHash: t.CodeHash, Reason: abortedOnRestore}); err != nil {
			return err
		}
	}
	return nil
}

// readFold reads the whole log and folds it; it returns the events too.
func (k *Kernel) readFold(ctx context.Context) (Folded, []Event, error) {
	var all []Event
	for after := int64(0); ; {
		page, err := k.log.Read(ctx, after, restorePage)
		if err != nil {
			return Folded{}, nil, k.wrapErr("restore", "", "read event log", err)
		}
		all = append(all, page...)
		if len(page) < restorePage {
			break
		}
		after = page[len(page)-1].Seq
	}
	folded, err := Fold(all)
	if err != nil {
		return Folded{}, nil, k.wrapErr("restore", "", "fold event log", err)
	}
	return folded, all, nil
}

// pluginHistory reads every event naming plugin id: through the log's
// PluginEventReader when it has one, else by reading the whole log.
func (k *Kernel) pluginHistory(ctx context.Context, id string) ([]Event, error) {
	r, ok := k.log.(PluginEventReader)
	if !ok {
		_, all, err := k.readFold(ctx)
		return slices.DeleteFunc(all, func(e Event) bool { return e.Plugin != id }), err
	}
	var out []Event
	for after := int64(0); ; {
		page, err := r.ReadPlugin(ctx, id, after, restorePage)
		if err != nil {
			return nil, k.wrapErr("history", id, "read the plugin's events", err)
		}
		out = append(out, page...)
		if len(page) < restorePage {
			return out, nil
		}
		after = page[len(page)-1].Seq
	}
}

// restoreOne applies one plugin's target; the caller holds k.mu.
func (k *Kernel) restoreOne(ctx context.Context, id string, t Target) error {
	k.reg.RLock()
	f := k.fibers[id]
	system := k.systemIDs[id]
	k.reg.RUnlock()
	if system {
		if f != nil && !t.Enabled {
			return k.keepSystemOn(ctx, id)
		}
		return nil
	}
	if !t.Installed || t.Trust != TrustAgent {
		return nil // a system plugin the composition root no longer installs
	}
	code, err := k.committedCode(ctx, id, t.CodeHash)
	if err != nil {
		return err
	}
	k.mountTarget(ctx, t, code)
	return nil
}

// keepSystemOn handles a log that says system plugin id is disabled: the
// plugin stays enabled, the kernel is tainted, and plugin/enabled puts the
// log right. The caller holds k.mu.
func (k *Kernel) keepSystemOn(ctx context.Context, id string) error {
	k.Taint(TaintSystemDisableIgnored)
	k.logger.Warn("The event log says a system plugin is disabled; it stays enabled", "kernel", k.name, "plugin", id)
	return k.appendEvent(ctx, EventPluginEnabled, id, nil)
}

// recordSystemInstalls appends plugin/installed for system fibers the log
// does not know at their current version. Their declarative items are Go
// values, so only identity and dependencies are recorded.
func (k *Kernel) recordSystemInstalls(ctx context.Context, target map[string]Target) error {
	k.reg.RLock()
	var missing []*fiber
	for _, f := range k.order {
		t, ok := target[f.id]
		if f.trust == TrustSystem && (!ok || !t.Installed || t.Manifest.Version != f.manifest.Version) {
			missing = append(missing, f)
		}
	}
	k.reg.RUnlock()
	for _, f := range missing {
		m := f.manifest.clone()
		m.Contributes = nil
		if err := k.appendEvent(ctx, EventPluginInstalled, f.id, installedData{Manifest: m, Trust: TrustSystem}); err != nil {
			return err
		}
	}
	return nil
}
