package orm

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// Bounds of a read: how deep its spec may follow relations, and how many
// records its answer may hold, each time a record appears counted (a
// record many others point at is shared in memory but not in JSON).
const (
	MaxSpecDepth   = 8
	MaxReadRecords = 200_000
)

// idSet returns SQL selecting the ids in one bound JSON array, so a read
// of any number of records is one statement with one argument.
func idSet(d contracts.Dialect, ids []int64) (string, any) {
	raw, _ := json.Marshal(ids)
	if d == contracts.DialectPostgres {
		return `SELECT CAST(x AS BIGINT) FROM jsonb_array_elements_text(CAST(? AS jsonb)) AS x`, string(raw)
	}
	return `SELECT value FROM json_each(?)`, string(raw)
}

// reader reads records of one Read call: one query per model and relation
// level, whatever the number of records.
type reader struct {
	ctx    context.Context
	s      *service
	sch    *schema
	held   int64 // bytes of the read budget taken
	loaded int   // rows loaded by every query
}

// selectList lists m's stored columns.
func selectList(m *model, alias string) string {
	cols := []string{FieldID, FieldCreatedAt, FieldUpdatedAt, FieldCreatedBy, FieldUpdatedBy}
	for _, n := range m.names() {
		if m.fields[n].stored() {
			cols = append(cols, n)
		}
	}
	for i, c := range cols {
		cols[i] = fmt.Sprintf(`%s.%q AS %q`, alias, c, c)
	}
	return strings.Join(cols, ", ")
}

// rows loads the rows of m matching cond (SQL on alias t0 with args) that
// the caller may read, in m's order.
func (r *reader) rows(m *model, cond string, args []any) ([]contracts.Row, error) {
	where, gargs, err := r.s.filter(r.ctx, m, ActionRead, nil)
	if err != nil {
		return nil, err
	}
	by, err := orderBy(m, "t0", m.order)
	if err != nil {
		return nil, err
	}
	q := fmt.Sprintf(`SELECT %s FROM %q t0 WHERE %s AND %s ORDER BY %s LIMIT %d`, selectList(m, "t0"), Table(m.name), cond, where, by, MaxReadRecords+1)
	rows, err := r.s.db.Query(r.ctx, q, append(args, gargs...)...)
	if err != nil {
		return nil, fmt.Errorf("read model %s: %w", m.name, err)
	}
	if len(rows) > MaxReadRecords {
		return nil, errTooMany(m.name)
	}
	return rows, r.load(m.name, rows)
}

// byIDs loads the readable rows of m with ids.
func (r *reader) byIDs(m *model, ids []int64) ([]contracts.Row, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	set, arg := idSet(r.s.db.Dialect(), ids)
	return r.rows(m, `t0."id" IN (`+set+`)`, []any{arg})
}

func (s *service) Read(ctx context.Context, model string, ids []int64, spec ReadSpec) ([]Record, error) {
	recs, release, err := s.read(ctx, model, ids, spec)
	release()
	return recs, err
}

// read is Read holding its share of the read budget until release is
// called, so a caller encoding the answer holds it until it is encoded.
// release is never nil.
func (s *service) read(ctx context.Context, model string, ids []int64, spec ReadSpec) ([]Record, func(), error) {
	sch, m, err := s.model(ctx, model)
	if err != nil {
		return nil, func() {}, err
	}
	for _, id := range ids {
		if id < 1 {
			return nil, func() {}, errorf(ErrInvalid, at{model, ""}, "record id %d must be a whole number from 1", id)
		}
	}
	if err := checkSpecSize(model, spec); err != nil {
		return nil, func() {}, err
	}
	if err := checkSpec(sch, m, spec, 0); err != nil {
		return nil, func() {}, err
	}
	r := &reader{ctx: ctx, s: s, sch: sch}
	out, err := r.answer(m, ids, spec)
	if err != nil {
		r.release()
		return nil, func() {}, err
	}
	return out, r.release, nil
}

// answer reads the records with ids in that order, weighs the answer and
// takes what it weighs beyond the rows already loaded from the budget.
func (r *reader) answer(m *model, ids []int64, spec ReadSpec) ([]Record, error) {
	rows, err := r.byIDs(m, ids)
	if err != nil {
		return nil, err
	}
	recs, err := r.build(m, rows, spec)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]Record, len(recs))
	for _, rec := range recs {
		byID[rec[FieldID].(int64)] = rec
	}
	out := make([]Record, 0, len(ids))
	var missing []string
	for _, id := range ids {
		rec, ok := byID[id]
		if !ok {
			missing = append(missing, fmt.Sprint(id))
			continue
		}
		out = append(out, rec)
	}
	if len(missing) > 0 {
		return nil, errorf(ErrNotFound, at{m.name, ""}, "no record %s that this user may read", strings.Join(missing, ", "))
	}
	var w weight
	for _, rec := range out {
		if !w.weigh(rec) {
			return nil, w.check(m.name)
		}
	}
	return out, r.reserve(m.name, w.bytes-r.held)
}

func errTooMany(model string) error {
	return errorf(ErrInvalid, at{model, ""}, "the answer would hold more than %d records; the limit is %d; read fewer ids or a shallower spec",
		MaxReadRecords, MaxReadRecords)
}

// checkSpec checks that every key of spec names a field of m and that only
// relations have nested specs.
func checkSpec(sch *schema, m *model, spec ReadSpec, depth int) error {
	if depth > MaxSpecDepth {
		return errorf(ErrInvalid, at{m.name, ""}, "the read spec nests deeper than %d relations", MaxSpecDepth)
	}
	for name, sub := range spec {
		if isSystemField(name) {
			if len(sub) > 0 {
				return errorf(ErrInvalid, at{m.name, name}, "is not a relation; give it an empty spec")
			}
			continue
		}
		f := m.fields[name]
		if f == nil {
			return errorf(ErrInvalid, at{m.name, name}, "no such field")
		}
		if f.broken != "" {
			return errorf(ErrInvalid, at{m.name, name}, "cannot be read: %s", f.broken)
		}
		switch f.Kind {
		case KindMany2One, KindOne2Many, KindMany2Many:
			if err := checkSpec(sch, f.target, sub, depth+1); err != nil {
				return err
			}
		default:
			if len(sub) > 0 {
				return errorf(ErrInvalid, at{m.name, name}, "is a %s, not a relation; give it an empty spec", f.Kind)
			}
		}
	}
	return nil
}

// defaultSpec is what a nil spec reads: every field.
func defaultSpec(m *model) ReadSpec {
	spec := ReadSpec{FieldID: nil, FieldDisplay: nil, FieldCreatedAt: nil, FieldUpdatedAt: nil, FieldCreatedBy: nil, FieldUpdatedBy: nil}
	for n, f := range m.fields {
		if f.broken == "" {
			spec[n] = nil
		}
	}
	return spec
}

// build turns rows of m into records as spec says, loading relations with
// one query per relation for all the rows at once.
func (r *reader) build(m *model, rows []contracts.Row, spec ReadSpec) ([]Record, error) {
	if spec == nil {
		spec = defaultSpec(m)
	}
	recs := make([]Record, len(rows))
	ids := make([]int64, len(rows))
	for i, row := range rows {
		ids[i], _ = asInt(row[FieldID])
		recs[i] = Record{FieldID: ids[i]}
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range spec {
			if !yield(k) {
				return
			}
		}
	}) {
		if err := alive(r.ctx); err != nil {
			return nil, err
		}
		if err := r.fill(batch{m: m, rows: rows, recs: recs, ids: ids}, name, spec[name]); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// batch is the records of one model being built, with their rows and ids.
type batch struct {
	m    *model
	rows []contracts.Row
	recs []Record
	ids  []int64
}

// fill sets field name on every record of b.
func (r *reader) fill(b batch, name string, sub ReadSpec) error {
	m, rows, recs, ids := b.m, b.rows, b.recs, b.ids
	switch name {
	case FieldID:
		return nil
	case FieldDisplay:
		for i, row := range rows {
			recs[i][name] = displayOf(m, row)
		}
		return nil
	case FieldCreatedAt, FieldUpdatedAt, FieldCreatedBy, FieldUpdatedBy:
		for i, row := range rows {
			recs[i][name] = fromColumn(systemField(name).Kind, row[name])
		}
		return nil
	}
	f := m.fields[name]
	switch f.Kind {
	case KindMany2One:
		return r.many2one(f, sub, rows, recs)
	case KindOne2Many:
		return r.one2many(f, sub, recs, ids)
	case KindMany2Many:
		return r.many2many(f, sub, recs, ids)
	case KindComputed:
		return r.computed(b, f)
	case KindRelated:
		return r.related(f, rows, recs)
	}
	for i, row := range rows {
		recs[i][name] = fromColumn(f.Kind, row[name])
	}
	return nil
}

// displayOf is a record's display: its display field's value, else
// "<model>,<id>".
func displayOf(m *model, row contracts.Row) string {
	if m.display != "" {
		if v := row[m.display]; v != nil {
			return fmt.Sprint(fromColumn(m.fields[m.display].Kind, v))
		}
	}
	id, _ := asInt(row[FieldID])
	return fmt.Sprintf("%s,%d", m.name, id)
}

// nested returns the spec a relation's records are built with: the given
// one, or {id, display} when empty.
func nested(sub ReadSpec) ReadSpec {
	if len(sub) == 0 {
		return ReadSpec{FieldDisplay: nil}
	}
	return sub
}

func (r *reader) many2one(f *field, sub ReadSpec, rows []contracts.Row, recs []Record) error {
	var targets []int64
	for _, row := range rows {
		if id, ok := asInt(row[f.name]); ok {
			targets = append(targets, id)
		}
	}
	slices.Sort(targets)
	targets = slices.Compact(targets)
	trows, err := r.byIDs(f.target, targets)
	if err != nil {
		return err
	}
	built, err := r.build(f.target, trows, nested(sub))
	if err != nil {
		return err
	}
	byID := indexRecords(built)
	for i, row := range rows {
		id, _ := asInt(row[f.name])
		if rec, ok := byID[id]; ok {
			recs[i][f.name] = rec
		} else {
			recs[i][f.name] = nil // empty, or a record this user may not read
		}
	}
	return nil
}

func indexRecords(recs []Record) map[int64]Record {
	out := make(map[int64]Record, len(recs))
	for _, rec := range recs {
		out[rec[FieldID].(int64)] = rec
	}
	return out
}
