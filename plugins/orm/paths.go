package orm

import (
	"fmt"
	"strings"
)

// Domain paths: a term's path is walked once, hop by hop, so compiling it
// costs time and memory linear in its hops (MaxPathHops bounds them, and
// MaxDomainJoins the hops of a whole query).

// step is one relation a path crosses: the SQL that opens its subquery,
// and the model and alias the subquery selects from.
type step struct {
	open   string
	target *model
	alias  string
}

// term compiles t from model m at alias. It walks the path once, so its
// cost is linear in the hops: each hop opens a subquery, the end of the
// path is compared, and the subqueries are closed innermost first, each
// with the guard's domain of the model it enters. A related field's path
// takes its place; each counts as a hop, so no path walks for ever.
func (c *compiler) term(m *model, alias string, t term) (string, error) {
	var steps []step
	path, hops := t.path, 0
	for {
		f, err := c.field(m, t, path)
		if err != nil {
			return "", err
		}
		if f.Kind != KindRelated && len(path) == 1 {
			leaf, err := c.leaf(m, f, alias, t)
			if err != nil {
				return "", err
			}
			return c.close(steps, leaf)
		}
		if hops++; hops > c.bounds().hops {
			return "", c.termErr(m, t, "domain path crosses more than %d relations (related fields' paths included); the limit is %d",
				c.bounds().hops, c.bounds().hops)
		}
		if f.Kind == KindRelated {
			path = append(strings.Split(f.Path, "."), path[1:]...)
			continue
		}
		open, next, err := c.open(f, alias, t)
		if err != nil {
			return "", err
		}
		steps = append(steps, step{open: open, target: f.target, alias: next})
		m, alias, path = f.target, next, path[1:]
	}
}

// leaf compiles the end of a path: a relation itself, or a comparison.
func (c *compiler) leaf(m *model, f *field, alias string, t term) (string, error) {
	if f.Kind == KindOne2Many || f.Kind == KindMany2Many {
		return c.x2many(m, f, alias, t)
	}
	return c.compare(m, alias, t, f)
}

// close wraps leaf in the subqueries of steps. The guard's domains bind
// their values after everything inside them, so they are compiled from
// the innermost step out, in the order their ? appear in the text.
func (c *compiler) close(steps []step, leaf string) (string, error) {
	closes := make([]string, len(steps))
	size := len(leaf)
	for i := len(steps) - 1; i >= 0; i-- {
		guard, err := c.guardOf(steps[i].target, steps[i].alias)
		if err != nil {
			return "", err
		}
		closes[i] = guard + "))"
		size += len(steps[i].open) + len(closes[i])
	}
	var b strings.Builder
	b.Grow(size)
	for _, s := range steps {
		b.WriteString(s.open)
	}
	b.WriteString(leaf)
	for i := len(steps) - 1; i >= 0; i-- {
		b.WriteString(closes[i])
	}
	return b.String(), nil
}

// field resolves the first name of path on m: a system field (only at
// the end of a path), or a field that can be searched.
func (c *compiler) field(m *model, t term, path []string) (*field, error) {
	name := path[0]
	if isSystemField(name) && name != FieldDisplay {
		if len(path) > 1 {
			return nil, c.termErr(m, t, "%s is not a relation", name)
		}
		return systemField(name), nil
	}
	f := m.fields[name]
	switch {
	case f == nil && m.name == c.root:
		return nil, c.termErr(m, t, "no field %s", name)
	case f == nil:
		return nil, c.termErr(m, t, "model %s has no field %s", m.name, name)
	case f.broken != "":
		return nil, c.termErr(m, t, "field %s.%s cannot be used: %s", m.name, name, f.broken)
	case f.Kind == KindComputed:
		return nil, c.termErr(m, t, "%s.%s is computed when read and cannot be searched", m.name, name)
	case len(path) > 1 && f.Kind != KindRelated && f.Kind != KindMany2One && f.Kind != KindOne2Many && f.Kind != KindMany2Many:
		return nil, c.termErr(m, t, "%s.%s is a %s, not a relation", m.name, name, f.Kind)
	}
	return f, nil
}

// open returns the SQL opening the subquery of a hop through relation f
// from alias, and the alias of its target. The subquery selects no null:
// "col IN (...)" is then true or false, never null, so "!" negates it
// cleanly, and it does not depend on the outer row, so both engines can
// run it once and use the relation's index.
func (c *compiler) open(f *field, alias string, t term) (string, string, error) {
	if c.joins++; c.joins > c.bounds().joins {
		return "", "", &Error{Kind: ErrInvalid, Model: c.root, Term: t.raw,
			Msg: fmt.Sprintf("the domain crosses more than %d relations in all (the guard's domains included); the limit is %d", c.bounds().joins, c.bounds().joins)}
	}
	target, next := f.target, c.alias()
	var outer, sel, from string
	switch f.Kind {
	case KindMany2One:
		outer = fmt.Sprintf(`%s.%q IS NOT NULL AND %s.%q`, alias, f.name, alias, f.name)
		sel = fmt.Sprintf(`%s."id"`, next)
		from = fmt.Sprintf(`%q %s WHERE 1=1`, Table(target.name), next)
	case KindOne2Many:
		outer = fmt.Sprintf(`%s."id"`, alias)
		sel = fmt.Sprintf(`%s.%q`, next, f.Inverse)
		from = fmt.Sprintf(`%q %s WHERE %s.%q IS NOT NULL`, Table(target.name), next, next, f.Inverse)
	case KindMany2Many:
		j := c.alias()
		outer = fmt.Sprintf(`%s."id"`, alias)
		sel = fmt.Sprintf(`%s.%q`, j, joinSrc)
		from = fmt.Sprintf(`%q %s JOIN %q %s ON %s."id" = %s.%q WHERE 1=1`, JoinTable(f.owner.name, f.name), j,
			Table(target.name), next, next, j, joinDst)
	}
	return "(" + outer + " IN (SELECT " + sel + " FROM " + from + " AND ", next, nil
}

// x2many compiles a term on a relation itself: = and in ask whether the
// record is linked to one of the ids, != and not in whether it is linked
// to none of them, = null whether it has no linked record at all and
// != null whether it has one.
func (c *compiler) x2many(m *model, f *field, alias string, t term) (string, error) {
	pos, neg := t, false
	switch {
	case t.value == nil && t.op == "=":
		pos.op, neg = "!=", true
	case t.value == nil && t.op == "!=":
	case t.op == "!=":
		pos.op, neg = "=", true
	case t.op == "not in":
		pos.op, neg = "in", true
	}
	pos.path = []string{f.name, FieldID}
	sql, err := c.term(m, alias, pos)
	if neg {
		sql = "NOT " + sql
	}
	return sql, err
}

// guardOf returns " AND <the guard's read domain>" for a model a path
// enters, so a domain cannot probe records the user may not read.
func (c *compiler) guardOf(m *model, alias string) (string, error) {
	if !c.guarded {
		return "", nil
	}
	d, err := c.svc.guardDomain(c.ctx, m.name, ActionRead)
	if err != nil || d == nil {
		return "", err
	}
	n, err := parseDomain(d)
	if err != nil {
		return "", fmt.Errorf("the guard's domain for model %s: %w", m.name, err)
	}
	inner := &compiler{ctx: c.ctx, svc: c.svc, dialect: c.dialect, aliases: c.aliases, joins: c.joins, lim: c.lim}
	s, err := inner.where(m, alias, n)
	if err != nil {
		return "", err
	}
	c.args = append(c.args, inner.args...)
	c.aliases, c.joins = inner.aliases, inner.joins
	return " AND " + s, nil
}
