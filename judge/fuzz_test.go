package judge_test

import (
	"encoding/json"
	"testing"

	"github.com/sms-baseline/sms/judge"
)

// DecodeManifest never panics; what it accepts encodes back and decodes to
// the same manifest.
func FuzzDecodeManifest(f *testing.F) {
	for _, s := range []string{
		`{"id":"agent.a","version":"1"}`,
		`{"id":"agent.a","version":"1","inject":["x"],"contributes":{"tool":[{"name":"t"}]}}`,
		`{"id":"agent.a","unknown":true}`,
		`[1,2,3]`,
		`{"contributes":{"p":[[[[[[[[[[[]]]]]]]]]]]}}`,
		`{"id":"agent.a"} trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := judge.DecodeManifest(raw)
		if err != nil {
			return
		}
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("an accepted manifest does not encode: %v", err)
		}
		back, err := judge.DecodeManifest(again)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", again, err)
		}
		if b, _ := json.Marshal(back); string(b) != string(again) {
			t.Fatalf("round trip changed the manifest: %s, then %s", again, b)
		}
	})
}
