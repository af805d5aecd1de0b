package orm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// Bounds of a domain: its length (operators plus terms), and the values
// of one in or not in.
const (
	MaxDomainItems  = 1000
	MaxInValues     = 1000
	MaxDomainDepth  = 100   // operators nested in operators
	MaxDomainValues = 10000 // values bound, the guard's domains included
)

// Operators a domain term may use.
var operators = []string{"=", "!=", "<", "<=", ">", ">=", "in", "not in", "like", "ilike"}

// node is a parsed domain: an and, an or, a not or a term.
type node interface{ isNode() }

type andNode struct{ a, b node }
type orNode struct{ a, b node }
type notNode struct{ x node }

// term is one [path, operator, value].
type term struct {
	path  []string
	op    string
	value any
	raw   string // the term as JSON, to name it in errors
}

func (andNode) isNode() {}
func (orNode) isNode()  {}
func (notNode) isNode() {}
func (term) isNode()    {}

// domainError is a malformed domain; model is filled in by the caller.
type domainError struct {
	term string
	msg  string
}

func (e *domainError) Error() string { return e.msg }

// parseDomain parses prefix notation: "&" and "|" take the next two
// expressions, "!" the next one, and consecutive top-level expressions
// are joined by an implicit "&". An empty domain is nil (everything).
func parseDomain(d Domain) (node, error) {
	if len(d) > MaxDomainItems {
		return nil, &domainError{msg: fmt.Sprintf("a domain has at most %d items, got %d", MaxDomainItems, len(d))}
	}
	p := &domainParser{items: d}
	var out node
	for p.pos < len(d) {
		n, err := p.expr()
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = n
		} else {
			out = andNode{out, n}
		}
	}
	return out, nil
}

type domainParser struct {
	items Domain
	pos   int
	depth int
}

func (p *domainParser) expr() (node, error) {
	if p.pos >= len(p.items) {
		return nil, &domainError{msg: "the domain ends where an operator needs another expression"}
	}
	at := p.pos
	item := p.items[at]
	p.pos++
	if op, ok := item.(string); ok {
		switch op {
		case "&", "|":
			a, err := p.operand(op, at)
			if err != nil {
				return nil, err
			}
			b, err := p.operand(op, at)
			if err != nil {
				return nil, err
			}
			if op == "&" {
				return andNode{a, b}, nil
			}
			return orNode{a, b}, nil
		case "!":
			x, err := p.operand(op, at)
			if err != nil {
				return nil, err
			}
			return notNode{x}, nil
		}
		return nil, &domainError{term: quote(op), msg: fmt.Sprintf("item %d: %q is not an operator (&, |, !) or a term [path, operator, value]", at+1, op)}
	}
	return parseTerm(item, at)
}

func (p *domainParser) operand(op string, at int) (node, error) {
	if p.pos >= len(p.items) {
		return nil, &domainError{term: quote(op), msg: fmt.Sprintf("item %d: operator %s needs more expressions after it", at+1, op)}
	}
	if p.depth++; p.depth > MaxDomainDepth {
		return nil, &domainError{term: quote(op), msg: fmt.Sprintf("item %d: operators nest more than %d deep", at+1, MaxDomainDepth)}
	}
	defer func() { p.depth-- }()
	return p.expr()
}

func parseTerm(item any, at int) (node, error) {
	raw := quote(item)
	list, ok := item.([]any)
	if !ok || len(list) != 3 {
		return nil, &domainError{term: raw, msg: fmt.Sprintf("item %d is not an operator (&, |, !) or a term [path, operator, value]", at+1)}
	}
	path, ok := list[0].(string)
	if !ok || path == "" {
		return nil, &domainError{term: raw, msg: "a term's path must be a field name, or names joined by dots"}
	}
	if hops := strings.Count(path, "."); hops > MaxPathHops {
		return nil, &domainError{term: raw, msg: fmt.Sprintf("domain path has %d hops; the limit is %d", hops, MaxPathHops)}
	}
	parts := strings.Split(path, ".")
	for _, p := range parts {
		if !contracts.ValidIdent(p) {
			return nil, &domainError{term: raw, msg: fmt.Sprintf("path %q: %q is not a field name", path, p)}
		}
	}
	op, ok := list[1].(string)
	if !ok || !slices.Contains(operators, op) {
		return nil, &domainError{term: raw, msg: fmt.Sprintf("operator must be one of %s", strings.Join(operators, " "))}
	}
	t := term{path: parts, op: op, value: list[2], raw: raw}
	switch op {
	case "in", "not in":
		t.value = anySlice(t.value)
		if _, ok := t.value.([]any); !ok {
			return nil, &domainError{term: raw, msg: fmt.Sprintf("%s needs a list of values", op)}
		}
	case "like", "ilike":
		if _, ok := t.value.(string); !ok {
			return nil, &domainError{term: raw, msg: fmt.Sprintf("%s needs a string", op)}
		}
	case "=", "!=":
	default:
		if t.value == nil {
			return nil, &domainError{term: raw, msg: fmt.Sprintf("%s cannot compare with null", op)}
		}
	}
	return t, nil
}

// quote renders a domain item as JSON for an error message.
func quote(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	raw := strings.TrimSuffix(b.String(), "\n")
	if len(raw) > 200 {
		return raw[:200] + "..."
	}
	return raw
}

// likePattern turns a like value into a LIKE pattern with \ as its escape:
// a value without % is a literal substring, its %, _ and \ escaped and
// the whole wrapped in %...%; a value with % is the pattern itself.
func likePattern(v string) string {
	if strings.Contains(v, "%") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(v) + "%"
}

// globPattern translates a LIKE pattern (escape \) to SQLite's GLOB,
// which is case-sensitive as LIKE is on Postgres.
func globPattern(like string) string {
	var b strings.Builder
	escaped := false
	for _, r := range like {
		switch {
		case escaped:
			escaped = false
			b.WriteString(globLiteral(r))
		case r == '\\':
			escaped = true
		case r == '%':
			b.WriteByte('*')
		case r == '_':
			b.WriteByte('?')
		default:
			b.WriteString(globLiteral(r))
		}
	}
	if escaped { // a trailing escape matches a backslash, as on Postgres
		b.WriteString(`\`)
	}
	return b.String()
}

func globLiteral(r rune) string {
	switch r {
	case '*', '?', '[':
		return "[" + string(r) + "]"
	}
	return string(r)
}

// anySlice is a Go slice of any element type (a []int64 of ids, say) as a
// []any, so Go callers need not convert; other values are unchanged.
func anySlice(v any) any {
	if _, ok := v.([]any); ok || v == nil {
		return v
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.Type().Elem().Kind() == reflect.Uint8 {
		return v
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out
}
