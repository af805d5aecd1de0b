package adminapi

import (
	"encoding/json"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// A staged install that the kernel aborts is never a version, and the
// index lets go of it, so aborted installs do not pile up. Seen failing
// with plugin/aborted ignored (the staged entry stayed).
func TestIndexDropsAbortedInstalls(t *testing.T) {
	x := versionIndex{byID: map[string][]adminv1.PluginVersion{}, staged: map[string]adminv1.PluginVersion{}}
	data := func(v any) json.RawMessage { raw, _ := json.Marshal(v); return raw }
	x.fold(kernel.Event{Seq: 1, Type: kernel.EventPluginInstalled, Plugin: "agent.t",
		Data: data(map[string]any{"manifest": map[string]any{"id": "agent.t", "version": "1"}, "codeHash": "sha256:aa", "staged": true})})
	x.fold(kernel.Event{Seq: 2, Type: kernel.EventPluginAborted, Plugin: "agent.t", Data: data(map[string]any{"codeHash": "sha256:aa", "reason": "r"})})
	if len(x.staged) != 0 || len(x.byID["agent.t"]) != 0 {
		t.Fatalf("after an abort: staged %v, versions %v", x.staged, x.byID)
	}
}
