package adminv1_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// ChatStream against a real kernel: the events of a turn arrive in order,
// a plugin the agent defines comes with its verdict, and the turn ends
// with done and the reply. Seen failing with ReadSSE not resetting its
// buffer between frames (the second event did not decode).
func TestChatStreamEvents(t *testing.T) {
	define, _ := json.Marshal(map[string]any{
		"manifest": map[string]string{"id": "agent.noop", "version": "1"},
		"code":     "export default async function activate(cap) {}",
	})
	c := serve(t, baselinetest.Options{Approvals: true, Turns: [][]contracts.Block{
		{{Type: "text", Text: "Adding it."}, {Type: "tool_use", Name: "plugin_define", Input: define}},
		{{Type: "text", Text: "Done."}},
	}})
	var types []string
	var verdict, reply string
	err := c.ChatStream(context.Background(), "s1", "add a plugin", func(ev adminv1.ChatEvent) error {
		types = append(types, ev.Type)
		if ev.Verdict != nil {
			verdict = string(ev.Verdict.Status) + " " + ev.Verdict.PluginID
		}
		if ev.Reply != nil {
			reply = ev.Reply.Reply
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(types, ",")
	if !strings.HasPrefix(got, "text_delta") || !strings.HasSuffix(got, "done") || !strings.Contains(got, "tool_call") {
		t.Errorf("events = %s, want text_delta first, a tool_call and done last", got)
	}
	if verdict != "mounted agent.noop" || reply != "Done." {
		t.Errorf("verdict %q, reply %q; want mounted agent.noop and Done.", verdict, reply)
	}
}

// A turn that fails ends with an error event, which ChatStream returns;
// a wrong token is the kernel's 401 before any event.
func TestChatStreamErrors(t *testing.T) {
	url := boot(t, baselinetest.Options{Approvals: true, Turns: [][]contracts.Block{}})
	err := adminv1.New(url, token, nil).ChatStream(context.Background(), "s1", "hi", func(adminv1.ChatEvent) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "chat:") {
		t.Errorf("a turn whose model fails: %v, want the error event as an error", err)
	}
	err = adminv1.New(url, "wrong", nil).ChatStream(context.Background(), "s1", "hi", func(adminv1.ChatEvent) error { return nil })
	var kerr *adminv1.Error
	if !errors.As(err, &kerr) || kerr.Status != http.StatusUnauthorized {
		t.Errorf("wrong token: %v, want a 401 *Error", err)
	}
}
