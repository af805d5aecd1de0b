package agentloop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkInput validates against the whole JSON Schema, nested properties and
// enums included, and a schema cannot make the validator load anything.
// Seen failing with the Validate call removed, and (the file case) with the
// empty loader removed.
func TestCheckInput(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":["string","null"]},
		"x":{},"opt":{"type":"object","properties":{"mode":{"enum":["fast","slow"]}}}},"required":["n"]}`)
	cases := []struct{ input, err string }{
		{`{"n":2}`, ""},
		{`{"n":2,"s":null,"x":[1],"opt":{"mode":"fast"}}`, ""},
		{`{"n":2.5}`, "does not match"},
		{`{"n":2,"s":1}`, "does not match"},
		{`{}`, "does not match"},
		{`{"n":1,"opt":{"mode":"warp"}}`, "does not match"},
		{`[1]`, "must be a JSON object"},
		{`null`, "must be a JSON object"},
	}
	for _, c := range cases {
		_, err := checkInput(schema, json.RawMessage(c.input))
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("checkInput(%s) = %v, want %q", c.input, err, c.err)
		}
	}
	file := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(file, []byte(`{"type":"object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fileRef := json.RawMessage(`{"$ref":"file://` + file + `"}`)
	if _, err := checkInput(fileRef, json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "input_schema is not valid") {
		t.Fatalf("a schema referring to a file = %v, want it refused", err)
	}
}
