package goja

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	js "github.com/dop251/goja"

	"github.com/sms-baseline/sms/kernel"
)

// Values cross the bridge as JSON text, converted on the Go side in both
// directions: JavaScript never parses or stringifies bridge values, so agent
// code that replaces JSON, toJSON or prototype setters changes nothing.
//
// encode walks a JavaScript value with its own depth and size budget (the
// kernel's snapshot limits) and fails as soon as either is spent, before a
// cycle or a huge structure costs anything. Functions become {"$fn": id}.
// It reads only own enumerable string keys; getters run, as in JSON.stringify.
// It must run inside JavaScript (a host function, or callGo), where an
// exception thrown by a getter is caught.

var errValue = errors.New("value cannot cross the bridge")

type encoder struct {
	u     *unit
	buf   bytes.Buffer
	depth int
}

// encode returns v as JSON within the snapshot limits.
func (u *unit) encode(v js.Value) (json.RawMessage, error) {
	e := encoder{u: u}
	if err := e.value(v); err != nil {
		return nil, err
	}
	if e.buf.Len() > kernel.MaxSnapshotBytes {
		return nil, fmt.Errorf("%w: value is larger than %d bytes", errValue, kernel.MaxSnapshotBytes)
	}
	return json.RawMessage(e.buf.Bytes()), nil
}

func (e *encoder) value(v js.Value) error {
	if e.buf.Len() > kernel.MaxSnapshotBytes {
		return fmt.Errorf("%w: value is larger than %d bytes", errValue, kernel.MaxSnapshotBytes)
	}
	switch {
	case v == nil || js.IsUndefined(v) || js.IsNull(v):
		e.buf.WriteString("null")
	case js.IsString(v):
		appendString(&e.buf, v.String())
	case js.IsNumber(v):
		appendNumber(&e.buf, v)
	case js.IsBigInt(v):
		return fmt.Errorf("%w: a BigInt has no JSON form", errValue)
	default:
		obj, ok := v.(*js.Object)
		if !ok {
			if v.ExportType() != nil && v.ExportType().Kind() == reflect.Bool {
				e.buf.WriteString(strconv.FormatBool(v.ToBoolean()))
				return nil
			}
			e.buf.WriteString("null") // a symbol, as in an array
			return nil
		}
		return e.object(obj)
	}
	return nil
}

func (e *encoder) object(obj *js.Object) error {
	if _, ok := js.AssertFunction(obj); ok {
		e.buf.WriteString(`{"$fn":`)
		appendString(&e.buf, e.u.fnID(obj))
		e.buf.WriteByte('}')
		return nil
	}
	if e.depth >= kernel.MaxSnapshotDepth {
		return fmt.Errorf("%w: value nests deeper than %d levels", errValue, kernel.MaxSnapshotDepth)
	}
	e.depth++
	defer func() { e.depth-- }()
	switch obj.ClassName() {
	case "Array":
		return e.array(obj)
	case "Date":
		if t, ok := obj.Export().(time.Time); ok {
			appendString(&e.buf, t.UTC().Format("2006-01-02T15:04:05.000Z"))
			return nil
		}
	}
	e.buf.WriteByte('{')
	first := true
	for _, k := range obj.Keys() {
		x := obj.Get(k)
		if skipped(x) {
			continue
		}
		if !first {
			e.buf.WriteByte(',')
		}
		first = false
		appendString(&e.buf, k)
		e.buf.WriteByte(':')
		if err := e.value(x); err != nil {
			return err
		}
	}
	e.buf.WriteByte('}')
	return nil
}

func (e *encoder) array(obj *js.Object) error {
	n := obj.Get("length").ToInteger()
	e.buf.WriteByte('[')
	for i := int64(0); i < n; i++ {
		if i > 0 {
			e.buf.WriteByte(',')
		}
		if err := e.value(obj.Get(strconv.FormatInt(i, 10))); err != nil {
			return err
		}
		if e.buf.Len() > kernel.MaxSnapshotBytes {
			return fmt.Errorf("%w: value is larger than %d bytes", errValue, kernel.MaxSnapshotBytes)
		}
	}
	e.buf.WriteByte(']')
	return nil
}

// skipped reports whether an object property is left out, as JSON does
// with undefined and symbols.
func skipped(v js.Value) bool {
	if v == nil || js.IsUndefined(v) {
		return true
	}
	_, isSymbol := v.(*js.Symbol)
	return isSymbol
}

func appendNumber(b *bytes.Buffer, v js.Value) {
	switch n := v.Export().(type) {
	case int64:
		b.WriteString(strconv.FormatInt(n, 10))
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			b.WriteString("null")
			return
		}
		b.WriteString(strconv.FormatFloat(n, 'g', -1, 64))
	default:
		b.WriteString("null")
	}
}

// appendString writes s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\ufffd`)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// fnID returns the id under which fn is callable by the host, registering
// it the first time it crosses.
func (u *unit) fnID(fn *js.Object) string {
	if id, ok := u.fnIDs[fn]; ok {
		return id
	}
	id := "f" + strconv.Itoa(len(u.fnIDs)+1)
	u.fnIDs[fn] = id
	u.fns[id] = fn
	return id
}

// encodeGuarded encodes v from outside JavaScript: through encodeFn, so an
// exception a getter throws, or an interrupt, ends the encoding cleanly.
func (u *unit) encodeGuarded(v js.Value) (json.RawMessage, error) {
	u.encodeIn, u.encodeOut, u.encodeErr = v, nil, nil
	defer func() { u.encodeIn, u.encodeOut, u.encodeErr = nil, nil, nil }()
	if _, err := u.encodeFn(js.Undefined()); err != nil {
		return nil, err
	}
	return u.encodeOut, u.encodeErr
}
