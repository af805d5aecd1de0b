package kernel

import (
	"context"
	"fmt"
	"strings"
)

// Events reads the event log: events with Seq > after, at most limit of
// them (limit <= 0: all), in order. It is how admin APIs page the log.
func (k *Kernel) Events(ctx context.Context, after int64, limit int) ([]Event, error) {
	events, err := k.log.Read(ctx, after, limit)
	if err != nil {
		return nil, k.wrapErr("events", "", "read event log", err)
	}
	return events, nil
}

// Code returns content from the blob store by its HashCode, such as the
// code of an agent plugin's earlier version.
func (k *Kernel) Code(ctx context.Context, hash string) ([]byte, error) {
	code, err := k.blobs.Get(ctx, hash)
	if err != nil {
		return nil, k.wrapErr("code", "", "get "+hash, err)
	}
	return code, nil
}

// Record appends an audit event such as judge/submitted or chat/turn. The
// plugin/* and fiber/* types are the kernel's own (the log folds both) and are refused here.
// Data is encoded as JSON.
func (k *Kernel) Record(ctx context.Context, typ, plugin string, data any) error {
	if typ == "" || !strings.Contains(typ, "/") || strings.HasPrefix(typ, "plugin/") || strings.HasPrefix(typ, "fiber/") {
		return k.errf(CodeValidation, "record", plugin,
			fmt.Sprintf("event type %q must be a namespaced audit type such as judge/submitted, not plugin/* or fiber/*", typ))
	}
	return k.appendEvent(ctx, typ, plugin, data)
}
