package http

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DecodeBody decodes the request's JSON object body into v, refusing
// unknown fields: the error, a validation one, says the body must be
// shape (such as `{"login":"..."}`) and what was wrong.
func DecodeBody(r *Request, v any, shape string) error {
	obj, ok := r.Body.(map[string]any)
	if !ok {
		return NewError(KindValidation, "the body must be a JSON object: "+shape)
	}
	raw, err := json.Marshal(obj) // decoded from JSON, so it encodes again
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		err = dec.Decode(v)
	}
	if err != nil {
		return NewError(KindValidation, fmt.Sprintf("the body must be %s: %v", shape, err))
	}
	return nil
}
