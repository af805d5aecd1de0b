package goja

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	js "github.com/dop251/goja"

	"github.com/sms-baseline/sms/kernel"
)

// decode turns JSON from the host into plain JavaScript values: ordinary
// objects (own data properties, in the order given) and arrays. It is a
// small recursive-descent parser: the host already bounded the depth and
// size, and encoding/json's token stream costs more than the rest of a call.
func (u *unit) decode(raw []byte) (js.Value, error) {
	if len(raw) == 0 {
		return js.Undefined(), nil
	}
	d := decoder{u: u, s: raw}
	v, err := d.value(0)
	if err == nil {
		d.space()
		if d.i != len(d.s) {
			err = d.fail("trailing data")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("decode a value from the host: %w", err)
	}
	return v, nil
}

type decoder struct {
	u *unit
	s []byte
	i int
}

func (d *decoder) fail(what string) error {
	return fmt.Errorf("%s at offset %d", what, d.i)
}

func (d *decoder) space() {
	for d.i < len(d.s) && (d.s[d.i] == ' ' || d.s[d.i] == '\t' || d.s[d.i] == '\n' || d.s[d.i] == '\r') {
		d.i++
	}
}

func (d *decoder) value(depth int) (js.Value, error) {
	if depth > kernel.MaxSnapshotDepth {
		return nil, d.fail("nesting too deep")
	}
	d.space()
	if d.i >= len(d.s) {
		return nil, d.fail("unexpected end")
	}
	switch d.s[d.i] {
	case '{':
		return d.object(depth)
	case '[':
		return d.array(depth)
	case '"':
		s, err := d.str()
		return d.u.rt.ToValue(s), err
	case 't', 'f', 'n':
		return d.literal()
	default:
		return d.number()
	}
}

func (d *decoder) literal() (js.Value, error) {
	for _, l := range []struct {
		text string
		v    js.Value
	}{{"true", d.u.rt.ToValue(true)}, {"false", d.u.rt.ToValue(false)}, {"null", js.Null()}} {
		if bytes.HasPrefix(d.s[d.i:], []byte(l.text)) {
			d.i += len(l.text)
			return l.v, nil
		}
	}
	return nil, d.fail("invalid literal")
}

func (d *decoder) number() (js.Value, error) {
	start := d.i
	for d.i < len(d.s) && strings.IndexByte("+-0123456789.eE", d.s[d.i]) >= 0 {
		d.i++
	}
	text := string(d.s[start:d.i])
	if n, err := strconv.ParseInt(text, 10, 64); err == nil && n >= -(1<<53) && n <= 1<<53 {
		return d.u.rt.ToValue(n), nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, d.fail("invalid number")
	}
	return d.u.rt.ToValue(f), nil
}

// str reads a JSON string; escapes are rare, and left to encoding/json.
func (d *decoder) str() (string, error) {
	start := d.i
	d.i++
	escaped := false
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case '\\':
			escaped = true
			d.i += 2
			continue
		case '"':
			d.i++
			if !escaped {
				return string(d.s[start+1 : d.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(d.s[start:d.i], &s); err != nil {
				return "", d.fail("invalid string")
			}
			return s, nil
		}
		d.i++
	}
	return "", d.fail("unterminated string")
}

func (d *decoder) array(depth int) (js.Value, error) {
	items, err := d.items(depth)
	if err != nil {
		return nil, err
	}
	list := make([]any, len(items))
	for i, v := range items {
		list[i] = v
	}
	return d.u.rt.NewArray(list...), nil
}

// items reads the elements of the array starting at d.i.
func (d *decoder) items(depth int) ([]js.Value, error) {
	d.i++
	var items []js.Value
	for {
		d.space()
		if d.i < len(d.s) && d.s[d.i] == ']' {
			d.i++
			return items, nil
		}
		if len(items) > 0 {
			if d.s[d.i] != ',' {
				return nil, d.fail("expected , or ]")
			}
			d.i++
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
	}
}

func (d *decoder) object(depth int) (js.Value, error) {
	d.i++
	obj := d.u.rt.NewObject()
	for n := 0; ; n++ {
		d.space()
		if d.i < len(d.s) && d.s[d.i] == '}' {
			d.i++
			return obj, nil
		}
		if n > 0 {
			if d.i >= len(d.s) || d.s[d.i] != ',' {
				return nil, d.fail("expected , or }")
			}
			d.i++
			d.space()
		}
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, d.fail("expected a key")
		}
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, d.fail("expected :")
		}
		d.i++
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		// Defined, not assigned: a setter agent code put on
		// Object.prototype is never called.
		if err := obj.DefineDataProperty(key, v, js.FLAG_TRUE, js.FLAG_TRUE, js.FLAG_TRUE); err != nil {
			return nil, err
		}
	}
}

// decodeArgs decodes a call's JSON array of arguments into a Go slice,
// without building a JavaScript array first.
func (u *unit) decodeArgs(raw []byte) ([]js.Value, error) {
	d := decoder{u: u, s: raw}
	d.space()
	if d.i >= len(d.s) || d.s[d.i] != '[' {
		return nil, errors.New("call arguments must be a JSON array")
	}
	items, err := d.items(0)
	if err == nil {
		d.space()
		if d.i != len(d.s) {
			err = d.fail("trailing data")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("decode call arguments: %w", err)
	}
	return items, nil
}
