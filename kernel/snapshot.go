package kernel

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Limits on values crossing the executor boundary.
const (
	// MaxSnapshotBytes is the largest JSON value that crosses the bridge.
	MaxSnapshotBytes = 1 << 20
	// MaxSnapshotDepth is the deepest nesting of arrays and objects allowed.
	MaxSnapshotDepth = 64
)

// Snapshot encodes v as a JSON value within the bridge's size and depth
// limits. Func values encode as null.
func Snapshot(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
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
