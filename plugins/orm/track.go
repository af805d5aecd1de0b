package orm

import (
	"fmt"
	"reflect"
	"strings"
)

// Track implements Service.
func (s *service) Track(model string, fields []string) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tracked == nil {
		s.tracked = map[string]map[string]int{}
	}
	if s.tracked[model] == nil {
		s.tracked[model] = map[string]int{}
	}
	for _, f := range fields {
		s.tracked[model][f]++
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, f := range fields {
			if s.tracked[model][f]--; s.tracked[model][f] <= 0 {
				delete(s.tracked[model], f)
			}
		}
		if len(s.tracked[model]) == 0 {
			delete(s.tracked, model)
		}
	}
}

// trackedIn is the tracked stored scalar fields of m that values writes.
func (s *service) trackedIn(m *model, values map[string]any) []*field {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*field
	for name := range s.tracked[m.name] {
		if f := m.fields[name]; f != nil && f.stored() && f.Kind != KindOne2Many && f.Kind != KindMany2Many {
			if _, written := values[name]; written {
				out = append(out, f)
			}
		}
	}
	return out
}

// snapshot reads fields of the records ids inside the write's transaction.
func (w *writer) snapshot(m *model, ids []int64, fields []*field) (map[int64]map[string]any, error) {
	cols := make([]string, 0, len(fields)+1)
	cols = append(cols, `"id"`)
	for _, f := range fields {
		cols = append(cols, fmt.Sprintf("%q", f.name))
	}
	set, arg := idSet(w.s.db.Dialect(), ids)
	rows, err := w.tx.Query(w.ctx, fmt.Sprintf(`SELECT %s FROM %q WHERE "id" IN (%s)`, strings.Join(cols, ", "), Table(m.name), set), arg)
	if err != nil {
		return nil, fmt.Errorf("track model %s: %w", m.name, err)
	}
	out := make(map[int64]map[string]any, len(rows))
	for _, r := range rows {
		id, _ := asInt(r["id"])
		vals := make(map[string]any, len(fields))
		for _, f := range fields {
			vals[f.name] = fromColumn(f.Kind, r[f.name])
		}
		out[id] = vals
	}
	return out, nil
}

// diff is what changed between two snapshots.
func diff(before, after map[int64]map[string]any) map[int64]map[string]Tracked {
	out := map[int64]map[string]Tracked{}
	for id, old := range before {
		for name, o := range old {
			n := after[id][name]
			if reflect.DeepEqual(o, n) {
				continue
			}
			if out[id] == nil {
				out[id] = map[string]Tracked{}
			}
			out[id][name] = Tracked{Old: o, New: n}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
