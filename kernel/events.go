package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Event types. The plugin/* events are the source of truth that Restore
// folds; fiber/* (and the judge's and chat's) events are audit only.
//
// An agent plugin's install is staged: plugin/installed records it, and it
// counts as installed only once plugin/mounted, written after its mount and
// the judge's invariants passed, commits it. plugin/aborted discards a staged
// install (a failed mount, or one a crash interrupted).
const (
	EventPluginInstalled   = "plugin/installed"
	EventPluginMounted     = "plugin/mounted"
	EventPluginAborted     = "plugin/aborted"
	EventPluginEnabled     = "plugin/enabled"
	EventPluginDisabled    = "plugin/disabled"
	EventPluginUninstalled = "plugin/uninstalled"
	EventFiberActivated    = "fiber/activated"
	EventFiberDeactivated  = "fiber/deactivated"
	EventFiberFailed       = "fiber/failed"
)

// Event is one entry of the append-only event log.
type Event struct {
	Seq    int64           `json:"seq"` // assigned by the log, increasing from 1
	Type   string          `json:"type"`
	Plugin string          `json:"plugin,omitempty"`
	Time   time.Time       `json:"time"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// EventLog is the kernel's append-only log. Implementations must be safe for
// concurrent use. Append assigns Seq and returns only once the event is
// durable; a failed Append must not have appended. Sequence numbers start at
// 1, have no gaps and follow commit order, so a reader paging with after=N
// never skips an event that commits later. Read returns events with
// Seq > after in increasing order, at most limit of them (limit <= 0: all).
type EventLog interface {
	Append(ctx context.Context, e Event) (int64, error)
	Read(ctx context.Context, after int64, limit int) ([]Event, error)
}

// PluginEventReader is an EventLog that reads one plugin's history alone:
// the events whose Plugin is plugin, with Seq > after, in increasing order,
// at most limit of them (limit <= 0: all). A rollback (Abort) reads it
// instead of the whole log when the log offers it.
type PluginEventReader interface {
	ReadPlugin(ctx context.Context, plugin string, after int64, limit int) ([]Event, error)
}

// BlobStore stores immutable content by its HashCode. Put is idempotent and
// returns the hash; Get of an unknown hash returns a CodeNotFound error.
// Implementations must be safe for concurrent use.
type BlobStore interface {
	Put(ctx context.Context, data []byte) (string, error)
	Get(ctx context.Context, hash string) ([]byte, error)
}

// installedData is the payload of plugin/installed. Staged installs (every
// agent install since mounts became atomic) count only once committed;
// installs without the flag, written before, count at once.
type installedData struct {
	Manifest Manifest `json:"manifest"`
	CodeHash string   `json:"codeHash,omitempty"`
	Trust    Trust    `json:"trust"`
	Staged   bool     `json:"staged,omitempty"`
	// RequestedBy is who asked for the agent plugin (WithRequester).
	RequestedBy string `json:"requestedBy,omitempty"`
	// Capabilities is the agent plugin's capability set, derived when it
	// was proposed (Kernel.DeriveCapabilities). An empty set is written as
	// [], never left out: an install without the field (logged before sets
	// were recorded) derives its set when it activates.
	Capabilities []string `json:"capabilities"`
}

// mountedData is the payload of plugin/mounted: what is committed, which
// must be exactly what the staged install recorded.
type mountedData struct {
	CodeHash    string `json:"codeHash"`
	Declaration string `json:"declaration"`
}

// abortedData is the payload of plugin/aborted.
type abortedData struct {
	CodeHash string `json:"codeHash"`
	Reason   string `json:"reason"`
}

// appendEvent appends a source-of-truth event; failure aborts the operation.
func (k *Kernel) appendEvent(ctx context.Context, typ, plugin string, data any) error {
	e := Event{Type: typ, Plugin: plugin, Time: k.now().UTC()}
	if data != nil {
		raw, err := json.Marshal(data)
		if err != nil {
			return k.wrapErr("log", plugin, "encode "+typ, err)
		}
		e.Data = raw
	}
	if _, err := k.log.Append(ctx, e); err != nil {
		return k.wrapErr("log", plugin, "append "+typ, err)
	}
	k.appended.broadcast()
	return nil
}

// audit appends an audit-only event; a failure is logged, not returned.
func (k *Kernel) audit(ctx context.Context, typ, plugin string, data any) {
	if err := k.appendEvent(ctx, typ, plugin, data); err != nil {
		k.logger.Error("Audit event lost", "kernel", k.name, "type", typ, "plugin", plugin, "error", err)
	}
}

// Target is what the event log says should be installed for one plugin.
type Target struct {
	Manifest  Manifest `json:"manifest"`
	CodeHash  string   `json:"codeHash,omitempty"`
	Trust     Trust    `json:"trust"`
	Enabled   bool     `json:"enabled"`
	Installed bool     `json:"installed"` // false when only enable/disable was seen
	Seq       int64    `json:"seq"`       // the event that first installed it
	// RequestedBy is who asked for the installed version (WithRequester).
	RequestedBy string `json:"requestedBy,omitempty"`
	// Reversible: it is disabled by a disable that does not hold
	// (Kernel.DisableReversibly). A disable that holds also holds for a
	// version of an agent plugin installed after it, until plugin/enabled.
	Reversible bool `json:"reversible,omitempty"`
	// Committed: a plugin/mounted committed this install. An install
	// without the staged flag (written before commits existed, or by hand)
	// is not committed; Restore mounts it only if a RestoreGuard vouches
	// for it.
	Committed bool `json:"committed,omitempty"`
	// Failures counts the plugin's last activations that failed in a row
	// (Crashes of them never finished: the process died during them),
	// since its install or an enable of it while disabled.
	Failures int `json:"failures,omitempty"`
	Crashes  int `json:"crashes,omitempty"`
	// Quarantine says why the kernel quarantined it, while it stays
	// disabled by that quarantine.
	Quarantine string `json:"quarantine,omitempty"`
	// Capabilities is the agent plugin's capability set as recorded with
	// its install; nil for an install logged before sets were recorded.
	Capabilities []string `json:"capabilities,omitempty"`
}

// Folded is the event log folded: the committed targets by plugin id, and
// the staged installs no plugin/mounted or plugin/aborted has closed yet.
type Folded struct {
	Targets map[string]Target
	Staged  map[string]Target

	streaks streaks // activations failed in a row, from fiber/* events
}

// FoldTarget folds plugin/* events into the target map, keyed by plugin id.
// Other event types are ignored, and so are staged installs never
// committed. An unreadable payload is an error naming its sequence number.
func FoldTarget(events []Event) (map[string]Target, error) {
	f, err := Fold(events)
	return f.Targets, err
}

// Fold folds plugin/* events into committed targets and open staged installs.
func Fold(events []Event) (Folded, error) {
	f := Folded{Targets: map[string]Target{}, Staged: map[string]Target{}, streaks: streaks{}}
	for _, e := range events {
		if err := f.apply(e); err != nil {
			return Folded{}, fmt.Errorf("fold event %d (%s): %w", e.Seq, e.Type, err)
		}
	}
	f.streaks.finish(f.Targets)
	return f, nil
}

func (f *Folded) apply(e Event) error {
	switch e.Type {
	case EventFiberActivating, EventFiberActivated, EventFiberFailed:
		f.streaks.apply(e)
	case EventPluginInstalled:
		f.streaks.reset(e.Plugin)
		var d installedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		seq := e.Seq
		prev, seen := f.Targets[e.Plugin]
		if prev.Installed {
			seq = prev.Seq
		}
		// An admin's disable outlives a new version of an agent plugin.
		held := seen && prev.held() && d.Trust == TrustAgent
		t := Target{Manifest: d.Manifest, CodeHash: d.CodeHash, Trust: d.Trust, Enabled: !held, Installed: true, Seq: seq,
			RequestedBy: d.RequestedBy, Capabilities: d.Capabilities}
		if held {
			t.Quarantine = prev.Quarantine // the quarantine's disable holds for the new version too
		}
		if d.Staged {
			f.Staged[e.Plugin] = t
		} else {
			f.Targets[e.Plugin] = t
			delete(f.Staged, e.Plugin)
		}
	case EventPluginMounted:
		f.streaks.reset(e.Plugin)
		var d mountedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if t, ok := f.Staged[e.Plugin]; ok && t.CodeHash == d.CodeHash && t.Manifest.Declaration() == d.Declaration {
			t.Committed = true
			f.Targets[e.Plugin] = t
			delete(f.Staged, e.Plugin)
		}
	case EventPluginAborted:
		delete(f.Staged, e.Plugin)
		f.streaks.reset(e.Plugin)
	case EventPluginEnabled, EventPluginDisabled:
		return f.toggle(e)
	case EventPluginUninstalled:
		delete(f.Targets, e.Plugin)
		delete(f.Staged, e.Plugin)
	}
	return nil
}

// toggle folds plugin/enabled and plugin/disabled. Enabling a disabled
// plugin starts its count of failed activations again.
func (f *Folded) toggle(e Event) error {
	enabled := e.Type == EventPluginEnabled
	var d disabledData
	if !enabled && len(e.Data) > 0 {
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
	}
	t := f.Targets[e.Plugin]
	if t.Seq == 0 {
		t.Seq = e.Seq
	}
	if enabled && !t.Enabled {
		f.streaks.reset(e.Plugin)
	}
	t.Enabled, t.Reversible, t.Quarantine = enabled, d.Reversible, d.Quarantine
	f.Targets[e.Plugin] = t
	if st, ok := f.Staged[e.Plugin]; ok {
		st.Enabled, st.Reversible, st.Quarantine = enabled, d.Reversible, d.Quarantine
		f.Staged[e.Plugin] = st
	}
	return nil
}

// MemoryLog is an in-memory EventLog and PluginEventReader.
type MemoryLog struct {
	mu       sync.RWMutex
	events   []Event
	byPlugin map[string][]int // plugin -> indexes into events
}

// NewMemoryLog returns an empty in-memory log.
func NewMemoryLog() *MemoryLog { return &MemoryLog{} }

// Append implements EventLog.
func (l *MemoryLog) Append(ctx context.Context, e Event) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq = int64(len(l.events)) + 1
	e.Data = slices.Clone(e.Data)
	l.events = append(l.events, e)
	if e.Plugin != "" {
		if l.byPlugin == nil {
			l.byPlugin = map[string][]int{}
		}
		l.byPlugin[e.Plugin] = append(l.byPlugin[e.Plugin], len(l.events)-1)
	}
	return e.Seq, nil
}

// ReadPlugin implements PluginEventReader.
func (l *MemoryLog) ReadPlugin(ctx context.Context, plugin string, after int64, limit int) ([]Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	var out []Event
	for _, i := range l.byPlugin[plugin] {
		if l.events[i].Seq > after && (limit <= 0 || len(out) < limit) {
			out = append(out, l.events[i])
		}
	}
	return out, nil
}

// Read implements EventLog.
func (l *MemoryLog) Read(ctx context.Context, after int64, limit int) ([]Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	start := min(max(after, 0), int64(len(l.events)))
	rest := l.events[start:]
	if limit > 0 && len(rest) > limit {
		rest = rest[:limit]
	}
	return slices.Clone(rest), nil
}

// MemoryBlobs is an in-memory BlobStore.
type MemoryBlobs struct {
	mu    sync.RWMutex
	blobs map[string][]byte
}

// NewMemoryBlobs returns an empty in-memory blob store.
func NewMemoryBlobs() *MemoryBlobs { return &MemoryBlobs{blobs: map[string][]byte{}} }

// Put implements BlobStore.
func (b *MemoryBlobs) Put(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	h := HashCode(data)
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.blobs[h]; !ok {
		b.blobs[h] = slices.Clone(data)
	}
	return h, nil
}

// Get implements BlobStore.
func (b *MemoryBlobs) Get(ctx context.Context, hash string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	data, ok := b.blobs[hash]
	if !ok {
		return nil, kerr(CodeNotFound, "get blob", "", fmt.Sprintf("no blob %s", hash))
	}
	return slices.Clone(data), nil
}
