package kernel_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
)

// Executors see the kernel's snapshots byte for byte, so kernel.Snapshot
// must encode exactly as json.Marshal does, and kernel.Decode must accept
// and decode exactly what encoding/json does.

var snapshotValues = []any{
	nil, true, false, "", "plain text", `quote " and \ backslash`, "<html> & more", "tab\tnew\nline",
	"snow ☃", "line\u2028sep\u2029", "bad \xff utf-8", "\x7f", 0.0, math.Copysign(0, -1), 1.0, -2.5, 0.1,
	1e-6, 1e-7, 123456789e-15, 1e20, 1e21, 1.5e300, -1e-300, 42, kernel.Func(nil),
	map[string]any{}, []any{}, map[string]any(nil), []any(nil),
	map[string]any{"b": 1.0, "a": []any{"x", nil, map[string]any{"<": ">"}}, "é": true},
	[]any{map[string]any{"id": 1.0, "paid": true}, map[string]any{"id": 2.0, "paid": false}},
	map[string]any{"struct": struct {
		A int    `json:"a"`
		B string `json:"-"`
	}{A: 1, B: "hidden"}, "raw": json.RawMessage(` {"x": 1} `), "n": int64(7)},
}

// Seen failing with the fast string path accepting '<', and with floats
// always formatted with 'f'.
func TestSnapshotMatchesJSONMarshal(t *testing.T) {
	for _, v := range snapshotValues {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := kernel.Snapshot(v)
		if err != nil {
			t.Fatalf("Snapshot(%#v): %v", v, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Snapshot(%#v) = %s, want %s", v, got, want)
		}
	}
	for _, v := range []any{math.NaN(), math.Inf(1), map[string]any{"c": make(chan int)}} {
		if _, err := kernel.Snapshot(v); err == nil {
			t.Errorf("Snapshot(%#v) succeeded, want the error json.Marshal gives", v)
		}
	}
}

// A cyclic value fails instead of recursing without end.
// Seen failing (the test binary overflowed its stack) with the depth check
// removed from the kernel's map encoder.
func TestSnapshotRejectsCycles(t *testing.T) {
	m := map[string]any{}
	m["self"] = m
	if _, err := kernel.Snapshot(m); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Fatalf("Snapshot(cycle) error = %v, want a nesting error", err)
	}
	big := []any{strings.Repeat("x", kernel.MaxSnapshotBytes/2), strings.Repeat("y", kernel.MaxSnapshotBytes/2)}
	if _, err := kernel.Snapshot(big); err == nil {
		t.Fatal("Snapshot of a value over MaxSnapshotBytes succeeded")
	}
}

var decodeInputs = []string{
	`null`, `true`, `false`, `0`, `-0`, `1.5e3`, `-12.25E-2`, `1e999`, `01`, `+1`, `.5`, `1.`, `-`, `1e`, `1e+`,
	`"plain"`, `"esc\"aped"`, `"\u00e9\ud83d\ude00"`, `"é"`, "\"bad \xff\"", "\"ctl \x01\"", "\"\x7f\"",
	`[]`, `[ ]`, `[1,]`, `[,1]`, `[1 2]`, `{}`, `{ }`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1,"a":2}`,
	` {"id": 2, "paid": false, "tags": ["x", {"y": null}]} `, `[1] x`, `[1] [2]`, `tru`, `nul`, `truex`,
	`{"a":[1,{"b":[true,false,null]}]}`, ``, ` `, `"unterminated`, `[1`, `{"a":1`,
}

// Seen failing with the fast parser accepting a trailing comma, and with
// it decoding strings that hold escapes.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, in := range decodeInputs {
		checkDecode(t, []byte(in))
	}
}

func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, in := range decodeInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkDecode(t, raw) })
}

func checkDecode(t *testing.T, raw []byte) {
	t.Helper()
	got, err := kernel.Decode(raw)
	var want any
	dec := json.NewDecoder(bytes.NewReader(raw))
	wantErr := dec.Decode(&want)
	if wantErr == nil && dec.More() {
		wantErr = errTrailing
	}
	if (err != nil) != (wantErr != nil) {
		if err != nil && strings.Contains(err.Error(), "nesting") {
			return // the depth limit, which encoding/json does not have
		}
		t.Fatalf("Decode(%q) error = %v, encoding/json's = %v", raw, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode(%q) = %#v, want %#v", raw, got, want)
	}
}

var errTrailing = errors.New("trailing data")
