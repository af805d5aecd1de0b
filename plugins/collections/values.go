package collections

import (
	"encoding/json"
	"fmt"
	"math"
)

// maxExactInt is the largest integer a JSON number (a float64) holds exactly.
const maxExactInt = 1 << 53

// valueError is an error the caller can act on: its message is shown as
// is and it wraps one of the contract's sentinels.
type valueError struct {
	kind error
	msg  string
}

func (e *valueError) Error() string { return e.msg }
func (e *valueError) Unwrap() error { return e.kind }

func invalidf(format string, args ...any) error {
	return &valueError{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}

func notFoundf(format string, args ...any) error {
	return &valueError{kind: ErrNotFound, msg: fmt.Sprintf(format, args...)}
}

// toArg converts a value given for field f to the argument bound for its
// column: string, int64, float64, bool, JSON text, or nil for null. The
// error names the field and says what it wants.
func toArg(f Field, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	var out any
	ok := true
	switch f.Type {
	case TypeText:
		out, ok = v.(string)
	case TypeInteger:
		out, ok = asInt(v)
	case TypeReal:
		out, ok = asFloat(v)
	case TypeBoolean:
		out, ok = v.(bool)
	case TypeJSON:
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, invalidf("field %q: the value cannot be stored as JSON: %v", f.Name, err)
		}
		out = string(raw)
	default:
		return nil, invalidf("field %q has unknown type %q", f.Name, f.Type)
	}
	if !ok {
		return nil, invalidf("field %q: want %s, got %s", f.Name, wants[f.Type], kindOf(v))
	}
	return out, nil
}

var wants = map[FieldType]string{
	TypeText:    "a string",
	TypeInteger: fmt.Sprintf("a whole number between -%d and %d", maxExactInt, maxExactInt),
	TypeReal:    "a finite number",
	TypeBoolean: "true or false",
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) <= maxExactInt {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	var x float64
	switch n := v.(type) {
	case float64:
		x = n
	case float32:
		x = float64(n)
	case int:
		x = float64(n)
	case int64:
		x = float64(n)
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		x = f
	default:
		return 0, false
	}
	return x, !math.IsNaN(x) && !math.IsInf(x, 0)
}

// kindOf names the JSON kind of v for error messages.
func kindOf(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", truncate(x))
	case bool:
		return fmt.Sprintf("%t", x)
	case float64, float32, int, int32, int64, json.Number:
		return fmt.Sprintf("the number %v", x)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

func truncate(s string) string {
	const keep = 40
	if len(s) <= keep {
		return s
	}
	return s[:keep] + "..."
}

// fromColumn converts a column value read back for field f to the field's
// Go type. Engines differ in small ways (SQLite may hand back an integer
// from a REAL column, or 0/1 from a BOOLEAN one when the declared type is
// lost), so neighbouring types are accepted.
func fromColumn(f Field, v any) any {
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	switch x := v.(type) {
	case int64:
		switch f.Type {
		case TypeReal:
			return float64(x)
		case TypeBoolean:
			return x != 0
		}
	case float64:
		if f.Type == TypeInteger {
			return int64(x)
		}
	case string:
		if f.Type == TypeJSON {
			var out any
			if err := json.Unmarshal([]byte(x), &out); err == nil {
				return out
			}
		}
	}
	return v
}
