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
	joins   int  // relations crossed so far, the guard's domains included
	guarded bool // apply the guard's read domain to every model a path enters
	lim     *compileLimits
}

// compileLimits are the bounds a compiler holds a query to.
type compileLimits struct{ hops, joins, bytes int }

// defaultLimits are the exported bounds.
var defaultLimits = compileLimits{hops: MaxPathHops, joins: MaxDomainJoins, bytes: MaxQueryBytes}

func (c *compiler) bounds() compileLimits {
	if c.lim == nil {
		return defaultLimits
	}
	return *c.lim
}

func (c *compiler) alias() string {
	c.aliases++
	return fmt.Sprintf("t%d", c.aliases)
}

func (c *compiler) bind(v any) string {
	c.args = append(c.args, v)
	return "?"
}

// bound checks the number of values bound, which every engine limits,
// and the size of the compiled SQL.
func (c *compiler) bound(sql string) error {
	if len(c.args) > MaxDomainValues {
		return &Error{Kind: ErrInvalid, Model: c.root, Msg: fmt.Sprintf("the domain binds %d values; at most %d", len(c.args), MaxDomainValues)}
	}
	if n, limit := len(sql), c.bounds().bytes; n > limit {
		return &Error{Kind: ErrInvalid, Model: c.root, Msg: fmt.Sprintf("the domain compiles to %d bytes of SQL; the limit is %d", n, limit)}
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
		return c.term(m, alias, x)
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

// flatten lists the operands of a chain of ands (or of ors), appending
// to one list so a long chain costs linear time.
func flatten(n node, and bool) []node {
	return flattenInto(nil, n, and)
}

func flattenInto(out []node, n node, and bool) []node {
	switch x := n.(type) {
	case andNode:
		if and {
			return flattenInto(flattenInto(out, x.a, and), x.b, and)
		}
	case orNode:
		if !and {
			return flattenInto(flattenInto(out, x.a, and), x.b, and)
		}
	}
	return append(out, n)
}

func (c *compiler) termErr(m *model, t term, format string, args ...any) error {
	model := c.root
	if model == "" {
		model = m.name
	}
	return &Error{Kind: ErrInvalid, Model: model, Term: t.raw, Msg: fmt.Sprintf(format, args...)}
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
		if kind == KindBool || kind == KindJSON || kind == KindBinary {
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
