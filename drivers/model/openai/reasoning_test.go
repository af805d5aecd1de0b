package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// reasoningResponse is a recorded answer of a reasoning model: a reasoning
// item with encrypted content, then a function call.
const reasoningResponse = `{"id":"resp_1","object":"response","status":"completed","model":"gpt-test","output":[
 {"type":"reasoning","id":"rs_1","encrypted_content":"ENC","summary":[{"type":"summary_text","text":"Look up overdue invoices."}]},
 {"type":"function_call","id":"fc_1","call_id":"call_1","name":"overdue","arguments":"{\"min\":1}","status":"completed"}]}`

const finalResponse = `{"id":"resp_2","object":"response","status":"completed","model":"gpt-test","output":[
 {"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"done","annotations":[]}]}]}`

// Reasoning comes back as a thinking block carrying its item id and
// encrypted content, and is replayed before the function call it led to;
// the request asks for encrypted reasoning since nothing is stored. Seen
// failing with the thinking case of toItems skipping the block, and with
// Include removed from params.
func TestReasoningIsReplayedBeforeToolCall(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(raw))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			_, _ = io.WriteString(w, reasoningResponse)
			return
		}
		_, _ = io.WriteString(w, finalResponse)
	}))
	defer srv.Close()
	m := newModel(t, srv.URL, 0)
	first, err := m.Complete(context.Background(), request)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Content) != 2 || first.Content[0].Type != contracts.BlockThinking || first.Content[0].ID != "rs_1" ||
		first.Content[0].Signature != "ENC" || first.Content[1].Type != contracts.BlockToolUse {
		t.Fatalf("first response = %+v, want thinking (rs_1, ENC) then the tool call", first.Content)
	}
	req := request
	req.Messages = append(append([]contracts.Message{}, request.Messages...),
		contracts.Message{Role: contracts.RoleAssistant, Content: first.Content},
		contracts.Message{Role: contracts.RoleUser, Content: []contracts.Block{{Type: contracts.BlockToolResult, ToolUseID: "call_1", Content: "[]"}}})
	if _, err := m.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bodies[0], `"reasoning.encrypted_content"`) {
		t.Fatalf("first request does not ask for encrypted reasoning: %s", bodies[0])
	}
	var second struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal([]byte(bodies[1]), &second); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, item := range second.Input {
		typ, _ := item["type"].(string)
		if typ == "reasoning" && (item["id"] != "rs_1" || item["encrypted_content"] != "ENC") {
			t.Fatalf("replayed reasoning item = %v, want id rs_1 and encrypted_content ENC", item)
		}
		types = append(types, typ)
	}
	got := strings.Join(types, ",")
	if !strings.Contains(got, "reasoning,function_call,function_call_output") {
		t.Fatalf("second request's items = %s, want reasoning replayed before the function call", got)
	}
}
