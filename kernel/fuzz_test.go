package kernel_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/sms-baseline/sms/kernel"
)

// FuzzDecode feeds arbitrary bytes to the bridge decoder: it must return a
// value or an error, never panic, and what it accepts must re-encode within
// the limits.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"$fn":"f1"}]}`, `"x"`, `[[[[]]]]`, `{"a":"\"[["}`, `1e999`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := kernel.Decode(json.RawMessage(raw))
		if err != nil {
			return
		}
		if _, err := kernel.Snapshot(v); err != nil {
			t.Fatalf("decoded %q but cannot snapshot it again: %v", raw, err)
		}
	})
}

// FuzzManifest feeds arbitrary JSON manifests to Validate: it must never
// panic, and a manifest it accepts has a usable id and version.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"id":"agent.x","version":"1","inject":["db"],"contributes":{"tool":[{"name":"t"}]}}`))
	f.Add([]byte(`{"id":"","version":""}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m kernel.Manifest
		if json.Unmarshal(raw, &m) != nil {
			return
		}
		if err := m.Validate(); err == nil && (m.ID == "" || m.Version == "") {
			t.Fatalf("accepted a manifest without id or version: %+v", m)
		}
	})
}

// FuzzNames checks the hand-written name and id validators against the
// regular expressions they implement.
func FuzzNames(f *testing.F) {
	idRE := regexp.MustCompile(`^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$`)
	nameRE := regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)
	for _, s := range []string{"agent.x", "a..b", "a.", "A", "sms.http", "x-y_z.1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 100 {
			return
		}
		m := kernel.Manifest{ID: s, Version: "1"}
		if got, want := m.Validate() == nil, idRE.MatchString(s); got != want {
			t.Fatalf("id %q accepted = %v, want %v", s, got, want)
		}
		m = kernel.Manifest{ID: "a", Version: "1", Inject: []string{s}}
		if got, want := m.Validate() == nil, nameRE.MatchString(s); got != want {
			t.Fatalf("name %q accepted = %v, want %v", s, got, want)
		}
	})
}
