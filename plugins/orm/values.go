package orm

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
)

// Layouts of stored dates and datetimes: fixed width, so text order is
// time order on every driver.
const (
	dateLayout     = "2006-01-02"
	datetimeLayout = "2006-01-02T15:04:05.000Z"
)

// fixedNow is the clock defaults are checked with at declaration time.
func fixedNow() time.Time { return time.Unix(0, 0).UTC() }

// toArg converts a value given for a stored field to the argument bound
// for its column. nil stays nil (required is checked elsewhere).
func toArg(f Field, v any) (any, error) {
	if v == nil && f.Kind != KindBinary {
		return nil, nil
	}
	kind := f.Kind
	switch kind {
	case KindChar, KindText:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a string, got %s", kindOf(v))
		}
		return s, nil
	case KindSelection:
		s, ok := v.(string)
		if !ok || !slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == s }) {
			return nil, fmt.Errorf("want one of %s, got %s", optionList(f.Options), describe(v))
		}
		return s, nil
	case KindInt, KindMany2One:
		n, ok := asInt(v)
		if !ok {
			return nil, fmt.Errorf("want a whole number, got %s", describe(v))
		}
		if kind == KindMany2One && n < 1 {
			return nil, fmt.Errorf("want a record id (a whole number from 1), got %d", n)
		}
		return n, nil
	case KindFloat:
		x, ok := asFloat(v)
		if !ok {
			return nil, fmt.Errorf("want a number, got %s", describe(v))
		}
		return x, nil
	case KindBool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("want true or false, got %s", describe(v))
		}
		return b, nil
	case KindDate, KindDatetime:
		return timeArg(kind, v)
	case KindJSON:
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("want a JSON value: %w", err)
		}
		return string(raw), nil
	case KindBinary:
		b, ok := v.(Binary) // only the file routes make one: JSON never decodes to it
		if !ok {
			return nil, fmt.Errorf("a binary field is set by uploading the file (PUT %s/{model}/{id}/{field}) and cleared by DELETE there, not by a value", RESTPath)
		}
		if b.Key == "" {
			return nil, nil // cleared
		}
		raw, err := json.Marshal(b)
		return string(raw), err
	}
	return nil, fmt.Errorf("a %s field has no column", kind)
}

// timeArg normalizes a date (YYYY-MM-DD) or datetime (RFC 3339, any
// offset, stored in UTC with milliseconds).
func timeArg(kind Kind, v any) (any, error) {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case string:
		var err error
		if kind == KindDate {
			t, err = time.Parse(dateLayout, x)
		} else {
			t, err = time.Parse(time.RFC3339Nano, x)
		}
		if err != nil {
			if kind == KindDate {
				return nil, fmt.Errorf("want a date YYYY-MM-DD, got %q", x)
			}
			return nil, fmt.Errorf("want a datetime in RFC 3339 (2006-01-02T15:04:05Z), got %q", x)
		}
	default:
		return nil, fmt.Errorf("want a %s string, got %s", kind, kindOf(v))
	}
	if kind == KindDate {
		return t.Format(dateLayout), nil
	}
	return t.UTC().Format(datetimeLayout), nil
}

// defaultArg resolves a field's default for a create by op at now.
func defaultArg(f Field, v any, op OpContext, now func() time.Time) (any, error) {
	switch v {
	case DefaultUID:
		if f.Kind != KindInt && f.Kind != KindMany2One {
			return nil, fmt.Errorf("%s needs an int or many2one field", DefaultUID)
		}
		if op.UserID == 0 {
			return nil, nil
		}
		return op.UserID, nil
	case DefaultNow:
		if f.Kind != KindDatetime {
			return nil, fmt.Errorf("%s needs a datetime field", DefaultNow)
		}
		return now().UTC().Format(datetimeLayout), nil
	case DefaultToday:
		if f.Kind != KindDate {
			return nil, fmt.Errorf("%s needs a date field", DefaultToday)
		}
		return now().UTC().Format(dateLayout), nil
	}
	return toArg(f, v)
}

// fromColumn converts a column value back to the field's Go type: string,
// int64, float64, bool or the decoded JSON value.
func fromColumn(kind Kind, v any) any {
	if v == nil {
		return nil
	}
	switch kind {
	case KindInt, KindMany2One:
		if n, ok := asInt(v); ok {
			return n
		}
	case KindFloat:
		if x, ok := asFloat(v); ok {
			return x
		}
	case KindBool:
		switch b := v.(type) {
		case bool:
			return b
		case int64:
			return b != 0
		}
	case KindJSON, KindBinary:
		if s, ok := v.(string); ok {
			var out any
			if json.Unmarshal([]byte(s), &out) == nil {
				return out
			}
		}
	}
	return v
}

// asInt accepts whole numbers of any numeric type, and integral floats
// (what JSON numbers decode to).
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case float32:
		return float64(n), true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// kindOf names a value's JSON kind for error messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int64, int, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// describe names a value for error messages, quoting short strings.
func describe(v any) string {
	if s, ok := v.(string); ok && len(s) <= 40 {
		return fmt.Sprintf("%q", s)
	}
	if _, ok := asFloat(v); ok {
		return fmt.Sprintf("%v", v)
	}
	return kindOf(v)
}

func optionList(opts []Option) string {
	out := ""
	for i, o := range opts {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", o.Value)
	}
	return out
}
