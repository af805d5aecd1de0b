package orm

import (
	"fmt"
	"slices"

	"github.com/sms-baseline/sms/contracts"
)

// one2many reads the records whose inverse points at each record: one
// query for all of them. An empty spec gives each record a list of ids.
func (r *reader) one2many(f *field, sub ReadSpec, recs []Record, ids []int64) error {
	lists := make(map[int64][]any, len(ids))
	if len(ids) > 0 {
		set, arg := idSet(r.s.db.Dialect(), ids)
		rows, err := r.rows(f.target, fmt.Sprintf(`t0.%q IN (%s)`, f.Inverse, set), []any{arg})
		if err != nil {
			return err
		}
		var built []Record
		if len(sub) > 0 {
			if built, err = r.build(f.target, rows, sub); err != nil {
				return err
			}
		}
		for i, row := range rows {
			parent, _ := asInt(row[f.Inverse])
			if built != nil {
				lists[parent] = append(lists[parent], built[i])
			} else {
				id, _ := asInt(row[FieldID])
				lists[parent] = append(lists[parent], id)
			}
		}
	}
	for i, id := range ids {
		recs[i][f.name] = orEmpty(lists[id])
	}
	return nil
}

func orEmpty(list []any) []any {
	if list == nil {
		return []any{}
	}
	return list
}

// many2many reads the join table, then the targets: two queries.
func (r *reader) many2many(f *field, sub ReadSpec, recs []Record, ids []int64) error {
	lists := make(map[int64][]any, len(ids))
	if len(ids) > 0 {
		set, arg := idSet(r.s.db.Dialect(), ids)
		q := fmt.Sprintf(`SELECT %q AS "src", %q AS "dst" FROM %q WHERE %q IN (%s) LIMIT %d`, joinSrc, joinDst,
			JoinTable(f.owner.name, f.name), joinSrc, set, MaxReadRecords+1)
		links, err := r.s.db.Query(r.ctx, q, arg)
		if err != nil {
			return fmt.Errorf("read model %s field %s: %w", f.owner.name, f.name, err)
		}
		if len(links) > MaxReadRecords {
			return errTooMany(f.owner.name)
		}
		parents := map[int64][]int64{}
		var dsts []int64
		for _, l := range links {
			src, _ := asInt(l["src"])
			dst, _ := asInt(l["dst"])
			parents[dst] = append(parents[dst], src)
			dsts = append(dsts, dst)
		}
		slices.Sort(dsts)
		rows, err := r.byIDs(f.target, slices.Compact(dsts))
		if err != nil {
			return err
		}
		var built []Record
		if len(sub) > 0 {
			if built, err = r.build(f.target, rows, sub); err != nil {
				return err
			}
		}
		for i, row := range rows {
			dst, _ := asInt(row[FieldID])
			var v any = dst
			if built != nil {
				v = built[i]
			}
			for _, src := range parents[dst] {
				lists[src] = append(lists[src], v)
			}
		}
	}
	for i, id := range ids {
		recs[i][f.name] = orEmpty(lists[id])
	}
	return nil
}

// scalars returns the stored values of rows as records, what a compute
// method receives.
func scalars(m *model, rows []contracts.Row) []Record {
	out := make([]Record, len(rows))
	for i, row := range rows {
		rec := Record{}
		for _, name := range []string{FieldID, FieldCreatedAt, FieldUpdatedAt, FieldCreatedBy, FieldUpdatedBy} {
			rec[name] = fromColumn(systemField(name).Kind, row[name])
		}
		for n, f := range m.fields {
			if f.stored() {
				rec[n] = fromColumn(f.Kind, row[n])
			}
		}
		out[i] = rec
	}
	return out
}

// computed calls the field's method once for all the records.
func (r *reader) computed(b batch, f *field) error {
	m, rows, recs, ids := b.m, b.rows, b.recs, b.ids
	if len(rows) == 0 {
		return nil
	}
	meth, ok := r.sch.methods[m.name][f.Compute]
	if !ok {
		return errorf(ErrInvalid, at{m.name, f.name}, "compute method %s is not contributed", f.Compute)
	}
	if meth.plugin != f.plugin {
		return errorf(ErrInvalid, at{m.name, f.name}, "compute method %s is plugin %s's; a computed field calls only its own plugin's methods", f.Compute, meth.plugin)
	}
	op := r.s.opOf(r.ctx)
	call := MethodCall{Model: m.name, IDs: ids, Records: scalars(m, rows), Op: op}
	if meth.system {
		call.Orm = r.s
	}
	ctx, ok := deeper(r.ctx)
	if !ok {
		return errorf(ErrRejected, at{m.name, f.name}, "compute %s: methods are nested %d deep", f.Compute, MaxHookDepth)
	}
	out, err := callMethod(ctx, meth, call)
	if err != nil && f.plugin != m.plugin {
		// A field another plugin added does not break reads of the model.
		r.s.logger.Warn("ORM compute failed; the field reads as null", "model", m.name, "field", f.name, "plugin", f.plugin, "error", err)
		for _, rec := range recs {
			rec[f.name] = nil
		}
		return nil
	}
	if err != nil {
		return errorf(ErrInvalid, at{m.name, f.name}, "compute %s (plugin %s) failed: %v", f.Compute, meth.plugin, err)
	}
	values, err := computedValues(out)
	if err != nil {
		return errorf(ErrInvalid, at{m.name, f.name}, "compute %s (plugin %s): %v", f.Compute, meth.plugin, err)
	}
	for i, id := range ids {
		v := values[fmt.Sprint(id)]
		if v != nil && f.Returns != KindJSON {
			x, err := toArg(Field{Kind: f.Returns, Options: f.Options}, v)
			if err != nil {
				return errorf(ErrInvalid, at{m.name, f.name}, "compute %s answered for record %d: %v", f.Compute, id, err)
			}
			v = fromColumn(f.Returns, x)
		}
		recs[i][f.name] = v
	}
	return nil
}

// computedValues reads a compute's answer {id: value}.
func computedValues(out any) (map[string]any, error) {
	switch m := out.(type) {
	case map[string]any:
		return m, nil
	case map[int64]any:
		res := make(map[string]any, len(m))
		for k, v := range m {
			res[fmt.Sprint(k)] = v
		}
		return res, nil
	}
	return nil, fmt.Errorf("answered %T; want an object {id: value}", out)
}

// related follows the path's many2one hops, one query per hop.
func (r *reader) related(f *field, rows []contracts.Row, recs []Record) error {
	cur := make([]any, len(rows)) // the current hop's id per record
	for i, row := range rows {
		cur[i] = row[f.path[0].name]
	}
	for i, hop := range f.path[:len(f.path)-1] {
		next := f.path[i+1]
		var ids []int64
		for _, v := range cur {
			if id, ok := asInt(v); ok {
				ids = append(ids, id)
			}
		}
		trows, err := r.byIDs(hop.target, ids)
		if err != nil {
			return err
		}
		byID := map[int64]contracts.Row{}
		for _, tr := range trows {
			id, _ := asInt(tr[FieldID])
			byID[id] = tr
		}
		for i, v := range cur {
			id, _ := asInt(v)
			cur[i] = nil
			if tr, ok := byID[id]; ok {
				cur[i] = tr[next.name]
			}
		}
	}
	last := f.path[len(f.path)-1]
	for i := range recs {
		recs[i][f.name] = fromColumn(last.Kind, cur[i])
	}
	return nil
}
