package agentloop

import (
	"encoding/json"
	"strings"
	"testing"
)

// checkInput enforces objects, required properties and primitive types.
// Seen failing with integer accepting 2.5.
func TestCheckInput(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":["string","null"]},"x":{}},"required":["n"]}`)
	cases := []struct{ input, err string }{
		{`{"n":2}`, ""},
		{`{"n":2,"s":null,"x":[1]}`, ""},
		{`{"n":2.5}`, `property "n" must be of type integer`},
		{`{"n":2,"s":1}`, `property "s" must be of type`},
		{`{}`, `lacks required property "n"`},
		{`[1]`, "must be a JSON object"},
		{`null`, "must be a JSON object"},
	}
	for _, c := range cases {
		_, err := checkInput(schema, json.RawMessage(c.input))
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("checkInput(%s) = %v, want %q", c.input, err, c.err)
		}
	}
}
