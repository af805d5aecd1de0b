package kernel

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
)

// restorePage is how many events Restore reads per call to the log.
const restorePage = 1000

// Restore brings the kernel to the state the event log describes and
// settles. Agent plugins are re-created from the log, their code fetched from
// the blob store by hash; system plugins, which the composition root installs
// before calling Restore, take their enabled flag from the log, and are
// recorded as installed the first time the log sees them (or a new version).
// Fibers that fail to activate stay failed and their errors are returned
// joined; the rest of the kernel is restored regardless.
func (k *Kernel) Restore(ctx context.Context) error {
	ctx, err := k.lock(ctx, "restore")
	if err != nil {
		return err
	}
	defer k.mu.Unlock()
	target, err := k.readTarget(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(target))
	for id := range target {
		ids = append(ids, id)
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

func (k *Kernel) readTarget(ctx context.Context) (map[string]Target, error) {
	var all []Event
	for after := int64(0); ; {
		page, err := k.log.Read(ctx, after, restorePage)
		if err != nil {
			return nil, k.wrapErr("restore", "", "read event log", err)
		}
		all = append(all, page...)
		if len(page) < restorePage {
			break
		}
		after = page[len(page)-1].Seq
	}
	target, err := FoldTarget(all)
	if err != nil {
		return nil, k.wrapErr("restore", "", "fold event log", err)
	}
	return target, nil
}

// restoreOne applies one plugin's target; the caller holds k.mu.
func (k *Kernel) restoreOne(ctx context.Context, id string, t Target) error {
	k.reg.RLock()
	f := k.fibers[id]
	system := k.systemIDs[id]
	k.reg.RUnlock()
	if system {
		if f != nil {
			k.reg.Lock()
			f.enabled = t.Enabled
			k.reg.Unlock()
		}
		return nil
	}
	if !t.Installed || t.Trust != TrustAgent {
		return nil // a system plugin the composition root no longer installs
	}
	code, err := k.blobs.Get(ctx, t.CodeHash)
	if err != nil {
		return k.wrapErr("restore", id, "fetch code "+t.CodeHash, err)
	}
	if got := HashCode(code); got != t.CodeHash {
		return k.errf(CodeValidation, "restore", id, fmt.Sprintf("blob store returned code hashing to %s, want %s", got, t.CodeHash))
	}
	k.mount(ctx, t.Manifest, code, t.Enabled)
	return nil
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
		if t, ok := target[f.id]; ok && !t.Enabled {
			// A re-install must not silently re-enable what was disabled.
			if err := k.appendEvent(ctx, EventPluginDisabled, f.id, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
