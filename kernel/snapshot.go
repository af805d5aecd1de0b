package kernel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Limits on values crossing the executor boundary.
const (
	// MaxSnapshotBytes is the largest JSON value that crosses the bridge.
	MaxSnapshotBytes = 1 << 20
	// MaxSnapshotDepth is the deepest nesting of arrays and objects allowed.
	MaxSnapshotDepth = 64
)

// Snapshot encodes v as a JSON value within the bridge's size and depth
// limits. Func values encode as null. The output is what json.Marshal
// produces; plain values (maps with string keys, slices of any, strings,
// numbers, booleans, nil) are encoded without reflection.
func Snapshot(v any) (json.RawMessage, error) {
	raw, err := appendSnapshot(make([]byte, 0, 128), v, 0)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := checkSnapshot(raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Decode parses a JSON value from the bridge after checking its size and
// depth. Numbers decode as float64, objects as map[string]any.
func Decode(raw json.RawMessage) (any, error) {
	if err := checkSnapshot(raw); err != nil {
		return nil, err
	}
	p := plainParser{s: raw}
	if v, ok := p.value(); ok && p.end() {
		return v, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("snapshot: invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("snapshot: trailing data after the JSON value")
	}
	return v, nil
}

// checkSnapshot enforces MaxSnapshotBytes and MaxSnapshotDepth with one
// scan, before anything recursive touches the value.
func checkSnapshot(raw []byte) error {
	if len(raw) > MaxSnapshotBytes {
		return fmt.Errorf("snapshot: %d bytes exceeds the limit of %d", len(raw), MaxSnapshotBytes)
	}
	depth, inString, escaped := 0, false, false
	for _, b := range raw {
		switch {
		case escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case b == '"':
			inString = !inString
		case inString:
		case b == '[' || b == '{':
			depth++
			if depth > MaxSnapshotDepth {
				return fmt.Errorf("snapshot: nesting deeper than %d levels", MaxSnapshotDepth)
			}
		case b == ']' || b == '}':
			depth--
		}
	}
	return nil
}

// withFuncs replaces every {"$fn": id} object in v with mk(id).
func withFuncs(v any, mk func(id string) Func) any {
	switch t := v.(type) {
	case map[string]any:
		if id, ok := t["$fn"].(string); ok && len(t) == 1 {
			return mk(id)
		}
		for key, x := range t {
			t[key] = withFuncs(x, mk)
		}
	case []any:
		for i, x := range t {
			t[i] = withFuncs(x, mk)
		}
	}
	return v
}

// appendSnapshot appends v as json.Marshal encodes it. Values of other
// types, and strings or numbers with a subtle encoding, are left to
// json.Marshal. Past MaxSnapshotDepth it stops: a cyclic map or slice
// fails instead of recursing forever, and checkSnapshot would reject the
// result anyway.
func appendSnapshot(b []byte, v any, depth int) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case string:
		if plainString(t) {
			return append(append(append(b, '"'), t...), '"'), nil
		}
	case float64:
		if !math.IsNaN(t) && !math.IsInf(t, 0) {
			return appendFloat(b, t), nil
		}
	case int:
		return strconv.AppendInt(b, int64(t), 10), nil
	case Func:
		return append(b, "null"...), nil
	case map[string]any:
		return appendObject(b, t, depth)
	case []any:
		return appendArray(b, t, depth)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

// appendFloat formats f as encoding/json does.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-09 becomes e-9
		b = b[:n-1]
	}
	return b
}

func appendObject(b []byte, m map[string]any, depth int) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	if depth >= MaxSnapshotDepth {
		return nil, fmt.Errorf("nesting deeper than %d levels", MaxSnapshotDepth)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendSnapshot(b, k, depth); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendSnapshot(b, m[k], depth+1); err != nil {
			return nil, err
		}
		if len(b) > MaxSnapshotBytes {
			return nil, fmt.Errorf("value exceeds the limit of %d bytes", MaxSnapshotBytes)
		}
	}
	return append(b, '}'), nil
}

func appendArray(b []byte, list []any, depth int) ([]byte, error) {
	if list == nil {
		return append(b, "null"...), nil
	}
	if depth >= MaxSnapshotDepth {
		return nil, fmt.Errorf("nesting deeper than %d levels", MaxSnapshotDepth)
	}
	b = append(b, '[')
	var err error
	for i, x := range list {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendSnapshot(b, x, depth+1); err != nil {
			return nil, err
		}
		if len(b) > MaxSnapshotBytes {
			return nil, fmt.Errorf("value exceeds the limit of %d bytes", MaxSnapshotBytes)
		}
	}
	return append(b, ']'), nil
}

// plainString reports whether s is printable ASCII that JSON (with
// encoding/json's HTML escaping) writes as it is.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// plainParser decodes the JSON that bridges carry in the common case:
// strings of printable ASCII without escapes, and numbers and literals in
// their strict JSON form. It gives up (ok false) on anything else, valid or
// not, and Decode then leaves the whole value to encoding/json, which
// decodes what it accepts the same way.
type plainParser struct {
	s []byte
	i int
}

func (p *plainParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

// end reports whether only whitespace is left.
func (p *plainParser) end() bool {
	p.space()
	return p.i == len(p.s)
}

func (p *plainParser) value() (any, bool) {
	p.space()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch p.s[p.i] {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		return p.str()
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	case 'n':
		return nil, p.literal("null")
	default:
		return p.number()
	}
}

func (p *plainParser) literal(text string) bool {
	if !bytes.HasPrefix(p.s[p.i:], []byte(text)) {
		return false
	}
	p.i += len(text)
	return true
}

func (p *plainParser) str() (any, bool) {
	start := p.i + 1
	for p.i = start; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return string(p.s[start : p.i-1]), true
		case c < 0x20 || c >= 0x80 || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// number accepts -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (p *plainParser) number() (any, bool) {
	start := p.i
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return nil, false
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(p.s[start:p.i]), 64)
	return f, err == nil
}

func (p *plainParser) digits() int {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

func (p *plainParser) array() (any, bool) {
	p.i++
	list := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' && len(list) == 0 {
			p.i++
			return list, true
		}
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		list = append(list, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		p.i++
		switch p.s[p.i-1] {
		case ']':
			return list, true
		case ',':
		default:
			return nil, false
		}
	}
}

func (p *plainParser) object() (any, bool) {
	p.i++
	m := map[string]any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' && len(m) == 0 {
			p.i++
			return m, true
		}
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, false
		}
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		m[key.(string)] = v
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		p.i++
		switch p.s[p.i-1] {
		case '}':
			return m, true
		case ',':
		default:
			return nil, false
		}
	}
}
