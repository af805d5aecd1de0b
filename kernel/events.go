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
const (
	EventPluginInstalled   = "plugin/installed"
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

// BlobStore stores immutable content by its HashCode. Put is idempotent and
// returns the hash; Get of an unknown hash returns a CodeNotFound error.
// Implementations must be safe for concurrent use.
type BlobStore interface {
	Put(ctx context.Context, data []byte) (string, error)
	Get(ctx context.Context, hash string) ([]byte, error)
}

// installedData is the payload of plugin/installed.
type installedData struct {
	Manifest Manifest `json:"manifest"`
	CodeHash string   `json:"codeHash,omitempty"`
	Trust    Trust    `json:"trust"`
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
}

// FoldTarget folds plugin/* events into the target map, keyed by plugin id.
// Other event types are ignored. An unreadable plugin/installed payload is an
// error naming its sequence number.
func FoldTarget(events []Event) (map[string]Target, error) {
	out := map[string]Target{}
	for _, e := range events {
		switch e.Type {
		case EventPluginInstalled:
			var d installedData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return nil, fmt.Errorf("fold event %d (%s): %w", e.Seq, e.Type, err)
			}
			t, seen := out[e.Plugin]
			seq := e.Seq
			if seen && t.Installed {
				seq = t.Seq
			}
			out[e.Plugin] = Target{Manifest: d.Manifest, CodeHash: d.CodeHash, Trust: d.Trust,
				Enabled: true, Installed: true, Seq: seq}
		case EventPluginEnabled, EventPluginDisabled:
			t := out[e.Plugin]
			if t.Seq == 0 {
				t.Seq = e.Seq
			}
			t.Enabled = e.Type == EventPluginEnabled
			out[e.Plugin] = t
		case EventPluginUninstalled:
			delete(out, e.Plugin)
		}
	}
	return out, nil
}

// MemoryLog is an in-memory EventLog.
type MemoryLog struct {
	mu     sync.RWMutex
	events []Event
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
	return e.Seq, nil
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
