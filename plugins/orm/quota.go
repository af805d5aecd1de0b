package orm

import (
	"context"
	"encoding/json"
	"fmt"

	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// reserve admits an upload of size bytes from caller against the bounds:
// the file's size, the caller's uploads in flight and the bytes every file
// takes with the uploads in flight. count sums the stored files the first
// time it is needed.
func (f *files) reserve(caller string, size int64, count func() (int64, error)) (func(), error) {
	if size > f.limits.MaxBytes {
		return nil, smshttp.NewError(smshttp.KindTooLarge, fmt.Sprintf("the file is %d bytes; the limit is %d bytes per file", size, f.limits.MaxBytes))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stored < 0 {
		n, err := count()
		if err != nil {
			return nil, fmt.Errorf("count the stored files: %w", err)
		}
		f.stored = n
	}
	switch {
	case f.inFlight[caller] >= f.limits.PerCaller:
		return nil, smshttp.NewError(smshttp.KindTooMany, fmt.Sprintf("%s has %d uploads in flight; the limit is %d per caller", caller, f.inFlight[caller], f.limits.PerCaller))
	case f.stored+f.reserved+size > f.limits.MaxStored:
		return nil, smshttp.NewError(smshttp.KindTooLarge, fmt.Sprintf("the files take %d bytes (and %d are being uploaded); %d more would pass the limit of %d bytes for this tenant's files",
			f.stored, f.reserved, size, f.limits.MaxStored))
	}
	f.inFlight[caller]++
	f.reserved += size
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.reserved -= size
		if f.inFlight[caller]--; f.inFlight[caller] == 0 {
			delete(f.inFlight, caller)
		}
	}, nil
}

// added counts a stored file.
func (f *files) added(size int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stored >= 0 {
		f.stored += size
	}
}

// drop deletes files no record holds any more.
func (f *files) drop(ctx context.Context, gone []Binary) {
	st, ok := f.store()
	if !ok {
		return
	}
	for _, b := range gone {
		if err := st.Delete(ctx, b.Key); err != nil {
			continue // left behind; the count still lets it go
		}
		f.mu.Lock()
		if f.stored >= 0 {
			f.stored -= b.Size
		}
		f.mu.Unlock()
	}
}

// countStored sums the sizes of the files every binary field holds.
func (s *service) countStored(ctx context.Context) (int64, error) {
	var total int64
	for _, m := range s.reg.schema().models {
		for name, f := range m.fields {
			if f.Kind != KindBinary || !f.stored() {
				continue
			}
			rows, err := s.db.Query(ctx, fmt.Sprintf(`SELECT %q AS "b" FROM %q WHERE %q IS NOT NULL`, name, Table(m.name), name))
			if err != nil {
				return 0, err
			}
			for _, r := range rows {
				var b Binary
				if text, ok := r["b"].(string); ok && json.Unmarshal([]byte(text), &b) == nil {
					total += b.Size
				}
			}
		}
	}
	return total, nil
}

// binaries reads the files the records ids of m hold, for an unlink.
func (w *writer) binaries(m *model, ids []int64) error {
	for name, f := range m.fields {
		if f.Kind != KindBinary || !f.stored() {
			continue
		}
		set, arg := idSet(w.s.db.Dialect(), ids)
		rows, err := w.tx.Query(w.ctx, fmt.Sprintf(`SELECT %q AS "b" FROM %q WHERE "id" IN (%s) AND %q IS NOT NULL`, name, Table(m.name), set, name), arg)
		if err != nil {
			return fmt.Errorf("unlink: read the files of model %s: %w", m.name, err)
		}
		for _, r := range rows {
			var b Binary
			if text, ok := r["b"].(string); ok && json.Unmarshal([]byte(text), &b) == nil && b.Key != "" {
				w.files = append(w.files, b)
			}
		}
	}
	return nil
}
