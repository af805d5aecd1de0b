package orm

import (
	"context"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// compiler turns parsed domains into SQL. Every value becomes a ? bound
// in args; the SQL text holds only quoted identifiers checked against the
// schema, aliases and the compiler's own keywords.
type compiler struct {
	ctx     context.Context
	root    string // the model errors are reported on
	svc     *service
	dialect contracts.Dialect
	args    []any
	aliases int
	guarded bool // apply the guard's read domain to every model a path enters
}

func (c *compiler) alias() string {
	c.aliases++
	return fmt.Sprintf("t%d", c.aliases)
}

func (c *compiler) bind(v any) string {
	c.args = append(c.args, v)
	return "?"
}

// bound checks the number of values bound, which every engine limits.
func (c *compiler) bound() error {
	if len(c.args) > MaxDomainValues {
		return &Error{Kind: ErrInvalid, Model: c.root, Msg: fmt.Sprintf("the domain binds %d values; at most %d", len(c.args), MaxDomainValues)}
	}
	return nil
}

// where compiles n on model m whose row is alias; nil is TRUE.
func (c *compiler) where(m *model, alias string, n node) (string, error) {
	switch x := n.(type) {
	case nil:
		return "1=1", nil
	case andNode:
		return c.chain(m, alias, flatten(x, true), " AND ")
	case orNode:
		return c.chain(m, alias, flatten(x, false), " OR ")
	case notNode:
		s, err := c.where(m, alias, x.x)
		return "NOT (" + s + ")", err
	case term:
		return c.term(m, alias, x, x.path)
	}
	return "", fmt.Errorf("unknown domain node %T", n)
}

// chain compiles operands joined by one operator at one level, so a
// long chain does not nest deeper with each term.
func (c *compiler) chain(m *model, alias string, operands []node, op string) (string, error) {
	parts := make([]string, len(operands))
	for i, n := range operands {
		sql, err := c.where(m, alias, n)
		if err != nil {
			return "", err
		}
		parts[i] = sql
	}
	return "(" + strings.Join(parts, op) + ")", nil
}

// flatten lists the operands of a chain of ands (or of ors).
func flatten(n node, and bool) []node {
	switch x := n.(type) {
	case andNode:
		if and {
			return append(flatten(x.a, and), flatten(x.b, and)...)
		}
	case orNode:
		if !and {
			return append(flatten(x.a, and), flatten(x.b, and)...)
		}
	}
	return []node{n}
}

func (c *compiler) termErr(m *model, t term, format string, args ...any) error {
	model := c.root
	if model == "" {
		model = m.name
	}
	return &Error{Kind: ErrInvalid, Model: model, Term: t.raw, Msg: fmt.Sprintf(format, args...)}
}

// term compiles the rest of t's path from model m at alias.
func (c *compiler) term(m *model, alias string, t term, path []string) (string, error) {
	name := path[0]
	if isSystemField(name) && name != FieldDisplay {
		if len(path) > 1 {
			return "", c.termErr(m, t, "%s is not a relation", name)
		}
		return c.compare(m, alias, t, systemField(name))
	}
	f := m.fields[name]
	if f == nil {
		if m.name == c.root {
			return "", c.termErr(m, t, "no field %s", name)
		}
		return "", c.termErr(m, t, "model %s has no field %s", m.name, name)
	}
	if f.broken != "" {
		return "", c.termErr(m, t, "field %s.%s cannot be used: %s", m.name, name, f.broken)
	}
	switch f.Kind {
	case KindRelated:
		return c.term(m, alias, t, append(strings.Split(f.Path, "."), path[1:]...))
	case KindComputed:
		return "", c.termErr(m, t, "%s.%s is computed when read and cannot be searched", m.name, name)
	case KindMany2One:
		if len(path) == 1 {
			return c.compare(m, alias, t, f)
		}
		return c.hop(f, alias, t, path[1:])
	case KindOne2Many, KindMany2Many:
		if len(path) == 1 {
			return c.x2many(f, alias, t)
		}
		return c.hop(f, alias, t, path[1:])
	}
	if len(path) > 1 {
		return "", c.termErr(m, t, "%s.%s is a %s, not a relation", m.name, name, f.Kind)
	}
	return c.compare(m, alias, t, f)
}

// hop compiles the rest of a path through relation f as a subquery that
// selects no null: "col IN (...)" is then true or false, never null, so
// "!" negates it cleanly, and the subquery does not depend on the outer
// row, so both engines can run it once and use the relation's index.
func (c *compiler) hop(f *field, alias string, t term, rest []string) (string, error) {
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
	cond, err := c.term(target, next, t, rest)
	if err != nil {
		return "", err
	}
	guard, err := c.guardOf(target, next)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("(%s IN (SELECT %s FROM %s AND %s%s))", outer, sel, from, cond, guard), nil
}

// x2many compiles a term on a relation itself: = and in ask whether the
// record is linked to one of the ids, != and not in whether it is linked
// to none of them, = null whether it has no linked record at all and
// != null whether it has one.
func (c *compiler) x2many(f *field, alias string, t term) (string, error) {
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
	sql, err := c.hop(f, alias, pos, []string{FieldID})
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
	inner := &compiler{ctx: c.ctx, svc: c.svc, dialect: c.dialect, aliases: c.aliases}
	s, err := inner.where(m, alias, n)
	if err != nil {
		return "", err
	}
	c.args = append(c.args, inner.args...)
	c.aliases = inner.aliases
	return " AND " + s, nil
}

// systemField describes a column every model has, for comparisons.
func systemField(name string) *field {
	switch name {
	case FieldID, FieldCreatedBy, FieldUpdatedBy:
		return &field{name: name, Field: Field{Kind: KindInt}}
	}
	return &field{name: name, Field: Field{Kind: KindDatetime}}
}

// compare compiles the operator of t on column f of alias.
func (c *compiler) compare(m *model, alias string, t term, f *field) (string, error) {
	col := fmt.Sprintf(`%s.%q`, alias, f.name)
	kind := f.Kind
	if f.name == FieldID && kind == KindInt {
		kind = KindMany2One
	}
	arg := func(v any) (any, error) {
		x, err := toArg(Field{Kind: kind, Options: f.Options}, v)
		if err != nil {
			return nil, c.termErr(m, t, "%s: %v", f.name, err)
		}
		return x, nil
	}
	switch t.op {
	case "=", "!=":
		return c.equality(col, t, arg)
	case "<", "<=", ">", ">=":
		if kind == KindBool || kind == KindJSON {
			return "", c.termErr(m, t, "%s cannot be compared with %s", kind, t.op)
		}
		v, err := arg(t.value)
		if err != nil {
			return "", err
		}
		return col + " " + t.op + " " + c.bind(v), nil
	case "in", "not in":
		return c.in(col, t, arg)
	}
	return c.like(m, col, t, kind)
}

func (c *compiler) equality(col string, t term, arg func(any) (any, error)) (string, error) {
	if t.value == nil {
		if t.op == "=" {
			return col + " IS NULL", nil
		}
		return col + " IS NOT NULL", nil
	}
	v, err := arg(t.value)
	if err != nil {
		return "", err
	}
	if t.op == "=" {
		return col + " = " + c.bind(v), nil
	}
	return "(" + col + " IS NULL OR " + col + " <> " + c.bind(v) + ")", nil
}

// in compiles in and not in; a null in the list matches null, and not in
// matches null unless the list holds one.
func (c *compiler) in(col string, t term, arg func(any) (any, error)) (string, error) {
	if n := len(t.value.([]any)); n > MaxInValues {
		return "", &Error{Kind: ErrInvalid, Model: c.root, Term: t.raw, Msg: fmt.Sprintf("%s takes at most %d values, got %d", t.op, MaxInValues, n)}
	}
	var marks []string
	hasNull := false
	for _, v := range t.value.([]any) {
		if v == nil {
			hasNull = true
			continue
		}
		x, err := arg(v)
		if err != nil {
			return "", err
		}
		marks = append(marks, c.bind(x))
	}
	list := "1=0"
	if len(marks) > 0 {
		list = col + " IN (" + strings.Join(marks, ", ") + ")"
	}
	if t.op == "in" {
		if hasNull {
			return "(" + list + " OR " + col + " IS NULL)", nil
		}
		return list, nil
	}
	if hasNull {
		return "(" + col + " IS NOT NULL AND NOT " + list + ")", nil
	}
	return "(" + col + " IS NULL OR NOT " + list + ")", nil
}

// asciiUpper and asciiLower fold only ASCII letters, which is what
// SQLite's LIKE folds, so ilike matches the same rows on both drivers.
const (
	asciiUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	asciiLower = "abcdefghijklmnopqrstuvwxyz"
)

func (c *compiler) like(m *model, col string, t term, kind Kind) (string, error) {
	switch kind {
	case KindChar, KindText, KindSelection, KindJSON, KindDate, KindDatetime:
	default:
		return "", c.termErr(m, t, "%s needs a text field, not a %s", t.op, kind)
	}
	pattern := likePattern(t.value.(string))
	if strings.HasSuffix(strings.ReplaceAll(pattern, `\\`, ""), `\`) {
		return "", c.termErr(m, t, `the pattern ends with an unpaired \ escape`)
	}
	if c.dialect == contracts.DialectSQLite {
		if t.op == "like" {
			return col + " GLOB " + c.bind(globPattern(pattern)), nil
		}
		return col + " LIKE " + c.bind(pattern) + ` ESCAPE '\'`, nil
	}
	if t.op == "like" {
		return col + " LIKE " + c.bind(pattern) + ` ESCAPE '\'`, nil
	}
	return fmt.Sprintf(`translate(%s, '%s', '%s') LIKE translate(%s, '%s', '%s') ESCAPE '\'`,
		col, asciiUpper, asciiLower, c.bind(pattern), asciiUpper, asciiLower), nil
}

// orderBy compiles an order on model m at alias; ties break by id.
func orderBy(m *model, alias string, terms []orderTerm) (string, error) {
	var parts []string
	for _, t := range terms {
		if f := m.fields[t.field]; !isSystemField(t.field) && (f == nil || !f.stored()) || t.field == FieldDisplay {
			return "", &Error{Kind: ErrInvalid, Model: m.name, Field: t.field, Msg: "order needs a stored field of the model"}
		}
		dir := " ASC NULLS FIRST"
		if t.desc {
			dir = " DESC NULLS LAST"
		}
		parts = append(parts, fmt.Sprintf(`%s.%q`, alias, t.field)+dir)
	}
	return strings.Join(append(parts, alias+`."id" ASC`), ", "), nil
}
