package kernel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// DecodeItem decodes the JSON shape of a contributed item into out,
// refusing keys out does not have, so a misspelled key is an error rather
// than a silently ignored one. Items arrive as Go values or as decoded
// JSON (from manifests and agent plugins); one encode/decode round trip
// reads both and leaves the caller's item untouched (declarative items are
// shared by every activation). Func values encode as null.
func DecodeItem(item any, out any) error {
	raw, err := json.Marshal(item)
	if err != nil {
		return fmt.Errorf("encode item: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decode item: %w", err)
	}
	return nil
}

// ItemAs reads a contributed item of type T: a T, a non-nil *T, or the
// JSON shape DecodeItem reads. shape names the item for errors, as in
// "a model is {name, fields}".
func ItemAs[T any](item any, shape string) (T, error) {
	var out T
	switch it := item.(type) {
	case T:
		return it, nil
	case *T:
		if it == nil {
			return out, fmt.Errorf("%s, got a nil *%s", shape, reflect.TypeFor[T]().Name())
		}
		return *it, nil
	}
	if err := DecodeItem(item, &out); err != nil {
		return out, fmt.Errorf("%s: %w", shape, err)
	}
	return out, nil
}
