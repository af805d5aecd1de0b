package kernel

import (
	"bytes"
	"encoding/json"
	"fmt"
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
