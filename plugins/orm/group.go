package orm

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// Granularities of a date or datetime group.
var granularities = []string{"day", "week", "month", "year"}

// groupKey is one GroupBy entry, compiled.
type groupKey struct {
	name string // as requested: field or field:granularity
	sql  string
	kind Kind
}

func (s *service) groupKey(m *model, entry string) (groupKey, error) {
	name, gran, hasGran := strings.Cut(entry, ":")
	var kind Kind
	if isSystemField(name) && name != FieldDisplay {
		kind = systemField(name).Kind
	} else if f := m.fields[name]; f != nil && f.stored() {
		kind = f.Kind
	} else {
		return groupKey{}, errorf(ErrInvalid, at{m.name, name}, "groupBy needs a stored field of the model")
	}
	col := fmt.Sprintf(`t0.%q`, name)
	if !hasGran {
		if kind == KindJSON || kind == KindBinary {
			return groupKey{}, errorf(ErrInvalid, at{m.name, name}, "a %s field cannot be grouped by", kind)
		}
		return groupKey{name: entry, sql: col, kind: kind}, nil
	}
	if kind != KindDate && kind != KindDatetime {
		return groupKey{}, errorf(ErrInvalid, at{m.name, name}, "groupBy %s needs a date or datetime field, not a %s", entry, kind)
	}
	var expr string
	switch gran {
	case "day":
		expr = "substr(" + col + ", 1, 10)"
	case "month":
		expr = "substr(" + col + ", 1, 7)"
	case "year":
		expr = "substr(" + col + ", 1, 4)"
	case "week": // the Monday of the ISO week, as YYYY-MM-DD
		if s.db.Dialect() == contracts.DialectPostgres {
			expr = "to_char(date_trunc('week', CAST(substr(" + col + ", 1, 10) AS date)), 'YYYY-MM-DD')"
		} else {
			expr = "date(substr(" + col + ", 1, 10), 'weekday 0', '-6 days')"
		}
	default:
		return groupKey{}, errorf(ErrInvalid, at{m.name, name}, "granularity %q must be one of %s", gran, strings.Join(granularities, ", "))
	}
	return groupKey{name: entry, sql: expr, kind: KindChar}, nil
}

// aggregate is one compiled aggregate.
type aggregate struct {
	name, fn string
	sql      string
	kind     Kind
}

func aggregateOf(m *model, name, spec string) (aggregate, error) {
	if spec == "count" {
		return aggregate{name: name, fn: "count", sql: "COUNT(*)", kind: KindInt}, nil
	}
	fn, fname, ok := strings.Cut(spec, ":")
	if !ok || !slices.Contains([]string{"sum", "avg", "min", "max"}, fn) {
		return aggregate{}, errorf(ErrInvalid, at{m.name, ""}, "aggregate %s: %q must be count or sum|avg|min|max:field", name, spec)
	}
	var kind Kind
	if isSystemField(fname) && fname != FieldDisplay {
		kind = systemField(fname).Kind
	} else if f := m.fields[fname]; f != nil && f.stored() {
		kind = f.Kind
	} else {
		return aggregate{}, errorf(ErrInvalid, at{m.name, fname}, "aggregate %s needs a stored field (computed fields are not stored)", name)
	}
	numeric := kind == KindInt || kind == KindFloat
	if (fn == "sum" || fn == "avg") && !numeric || kind == KindJSON || kind == KindBool {
		return aggregate{}, errorf(ErrInvalid, at{m.name, fname}, "%s of a %s field is not defined", fn, kind)
	}
	return aggregate{name: name, fn: fn, sql: fmt.Sprintf(`%s(t0.%q)`, strings.ToUpper(fn), fname), kind: kind}, nil
}

// value converts an aggregate's result to the same Go type on every
// driver: counts and int sums int64, averages float64, min and max the
// field's type.
func (a aggregate) value(v any) any {
	if v == nil {
		return nil
	}
	switch {
	case a.fn == "avg":
		x, _ := asFloat(v)
		return x
	case a.fn == "count" || a.kind == KindInt:
		n, _ := asInt(v)
		return n
	}
	return fromColumn(a.kind, v)
}

func (s *service) ReadGroup(ctx context.Context, model string, req GroupRequest) ([]Group, error) {
	_, m, err := s.model(ctx, model)
	if err != nil {
		return nil, err
	}
	if err := groupBounds(m, req); err != nil {
		return nil, err
	}
	keys := make([]groupKey, len(req.GroupBy))
	for i, g := range req.GroupBy {
		if keys[i], err = s.groupKey(m, g); err != nil {
			return nil, err
		}
	}
	aggs := []aggregate{{name: "count", fn: "count", sql: "COUNT(*)", kind: KindInt}}
	for _, name := range slices.Sorted(maps.Keys(req.Aggregates)) {
		if name == "count" || slices.Contains(req.GroupBy, name) {
			return nil, errorf(ErrInvalid, at{m.name, ""}, "aggregate name %q is already taken by count or a group", name)
		}
		a, err := aggregateOf(m, name, req.Aggregates[name])
		if err != nil {
			return nil, err
		}
		aggs = append(aggs, a)
	}
	if req.Limit < 0 || req.Limit > MaxLimit {
		return nil, errorf(ErrInvalid, at{m.name, ""}, "limit %d must be from 1 to %d (0 for no limit)", req.Limit, MaxLimit)
	}
	where, args, err := s.filter(ctx, m, ActionRead, req.Domain)
	if err != nil {
		return nil, err
	}
	return s.groups(ctx, groupQuery{m: m, keys: keys, aggs: aggs, where: where, args: args, limit: req.Limit})
}

// groupBounds refuses a grouped read past MaxGroupBy, MaxAggregates or
// MaxGroupCells before anything is compiled.
func groupBounds(m *model, req GroupRequest) error {
	g, a := len(req.GroupBy), len(req.Aggregates)
	switch {
	case g > MaxGroupBy:
		return errorf(ErrInvalid, at{m.name, ""}, "groupBy has %d entries; the limit is %d", g, MaxGroupBy)
	case a > MaxAggregates:
		return errorf(ErrInvalid, at{m.name, ""}, "read_group asks for %d aggregates; the limit is %d", a, MaxAggregates)
	case g*a > MaxGroupCells:
		return errorf(ErrInvalid, at{m.name, ""}, "%d groupBy entries times %d aggregates is %d; the limit is %d", g, a, g*a, MaxGroupCells)
	}
	return nil
}

// groupQuery is one compiled grouped read.
type groupQuery struct {
	m     *model
	keys  []groupKey
	aggs  []aggregate
	where string
	args  []any
	limit int
}

func (s *service) groups(ctx context.Context, gq groupQuery) ([]Group, error) {
	m, keys, aggs := gq.m, gq.keys, gq.aggs
	var sel, by, order []string
	for i, k := range keys {
		sel = append(sel, fmt.Sprintf(`%s AS "g%d"`, k.sql, i))
		by = append(by, k.sql)
		order = append(order, k.sql+" ASC NULLS FIRST")
	}
	for i, a := range aggs {
		sel = append(sel, fmt.Sprintf(`%s AS "a%d"`, a.sql, i))
	}
	q := fmt.Sprintf(`SELECT %s FROM %q t0 WHERE %s`, strings.Join(sel, ", "), Table(m.name), gq.where)
	if len(keys) > 0 {
		q += " GROUP BY " + strings.Join(by, ", ") + " ORDER BY " + strings.Join(order, ", ")
	}
	args, limit := gq.args, gq.limit
	if limit == 0 {
		limit = MaxLimit + 1 // to tell a complete answer from a cut one
	}
	q += fmt.Sprintf(" LIMIT %d", limit)
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read_group model %s: %w", m.name, err)
	}
	if gq.limit == 0 && len(rows) > MaxLimit {
		return nil, errorf(ErrInvalid, at{m.name, ""}, "read_group has more than %d groups; group coarser, narrow the domain or pass a limit", MaxLimit)
	}
	out := make([]Group, 0, len(rows))
	for _, row := range rows {
		g := Group{}
		for i, k := range keys {
			g[k.name] = fromColumn(k.kind, row[fmt.Sprintf("g%d", i)])
		}
		for i, a := range aggs {
			g[a.name] = a.value(row[fmt.Sprintf("a%d", i)])
		}
		out = append(out, g)
	}
	return out, nil
}
