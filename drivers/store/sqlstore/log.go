package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// maxAppendAttempts bounds how often one Append retries after losing the
// race for a sequence number. Each loss means another append committed, so
// reaching the bound needs that many concurrent appenders winning in a row.
const maxAppendAttempts = 1000

// appendSQL takes the next sequence number and inserts in one statement.
// Two concurrent appends may compute the same number; the primary key makes
// the later one wait for the earlier to commit and then fail, and it retries.
// So a number is only ever taken once every smaller number has committed.
const appendSQL = `INSERT INTO ` + EventsTable + ` ("seq", "type", "plugin", "time", "data")
SELECT COALESCE(MAX("seq"), 0) + 1, ?, ?, ?, ? FROM ` + EventsTable + `
RETURNING "seq"`

const readSQL = `SELECT "seq", "type", "plugin", "time", "data" FROM ` + EventsTable + ` WHERE "seq" > ? ORDER BY "seq"`

// readPluginSQL reads one plugin's events through the index on (plugin, seq).
const readPluginSQL = `SELECT "seq", "type", "plugin", "time", "data" FROM ` + EventsTable +
	` WHERE "plugin" = ? AND "seq" > ? ORDER BY "seq"`

// eventLog is a kernel.EventLog and kernel.PluginEventReader in EventsTable.
type eventLog struct {
	db contracts.Database
}

// Append implements kernel.EventLog.
func (l *eventLog) Append(ctx context.Context, e kernel.Event) (int64, error) {
	var data any // NULL when there is no payload
	if len(e.Data) > 0 {
		if !utf8.Valid(e.Data) || !json.Valid(e.Data) {
			return 0, &kernel.Error{Code: kernel.CodeValidation, Op: "append event",
				Message: fmt.Sprintf("data of %s event is not valid UTF-8 JSON", e.Type)}
		}
		data = string(e.Data)
	}
	at := e.Time.UTC().Format(time.RFC3339Nano)
	for range maxAppendAttempts {
		rows, err := l.db.Query(ctx, appendSQL, e.Type, e.Plugin, at, data)
		if errors.Is(err, contracts.ErrUnique) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("append %s event: %w", e.Type, err)
		}
		if len(rows) != 1 {
			return 0, fmt.Errorf("append %s event: insert returned %d rows, want 1", e.Type, len(rows))
		}
		seq, err := asInt64(rows[0]["seq"])
		if err != nil {
			return 0, fmt.Errorf("append %s event: seq: %w", e.Type, err)
		}
		return seq, nil
	}
	return 0, fmt.Errorf("append %s event: lost the race for a sequence number %d times", e.Type, maxAppendAttempts)
}

// Read implements kernel.EventLog.
func (l *eventLog) Read(ctx context.Context, after int64, limit int) ([]kernel.Event, error) {
	return l.read(ctx, readSQL, []any{after}, limit)
}

// ReadPlugin implements kernel.PluginEventReader.
func (l *eventLog) ReadPlugin(ctx context.Context, plugin string, after int64, limit int) ([]kernel.Event, error) {
	out, err := l.read(ctx, readPluginSQL, []any{plugin, after}, limit)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", plugin, err)
	}
	return out, nil
}

func (l *eventLog) read(ctx context.Context, q string, args []any, limit int) ([]kernel.Event, error) {
	after := args[len(args)-1]
	if limit > 0 {
		// A literal, not a parameter: SQLite prepares a statement again
		// each time a LIMIT parameter is bound, so a cached one would not
		// be reused.
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := l.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read events after %d: %w", after, err)
	}
	out := make([]kernel.Event, 0, len(rows))
	for _, r := range rows {
		e, err := decodeEvent(r)
		if err != nil {
			return nil, fmt.Errorf("read events after %d: %w", after, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func decodeEvent(r contracts.Row) (kernel.Event, error) {
	var e kernel.Event
	var err error
	if e.Seq, err = asInt64(r["seq"]); err != nil {
		return e, fmt.Errorf("seq: %w", err)
	}
	if e.Type, err = asString(r["type"]); err != nil {
		return e, fmt.Errorf("event %d type: %w", e.Seq, err)
	}
	if e.Plugin, err = asString(r["plugin"]); err != nil {
		return e, fmt.Errorf("event %d plugin: %w", e.Seq, err)
	}
	at, err := asString(r["time"])
	if err != nil {
		return e, fmt.Errorf("event %d time: %w", e.Seq, err)
	}
	if e.Time, err = time.Parse(time.RFC3339Nano, at); err != nil {
		return e, fmt.Errorf("event %d time: %w", e.Seq, err)
	}
	if r["data"] != nil {
		data, err := asBytes(r["data"])
		if err != nil {
			return e, fmt.Errorf("event %d data: %w", e.Seq, err)
		}
		e.Data = json.RawMessage(data)
	}
	return e, nil
}
