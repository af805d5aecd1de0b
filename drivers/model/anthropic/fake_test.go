package anthropic_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

const (
	fakeKey   = "sk-test-key"
	fakeModel = "claude-test"
)

// fake answers each Messages call with the next turn, as JSON or SSE, after
// checking the request is in the Messages API's shape.
type fake struct {
	t     *testing.T
	mu    sync.Mutex
	turns [][]contracts.Block
	next  int
	ids   int
}

// The tokens the fake bills for every message.
const fakeInputTokens, fakeOutputTokens = 12, 7

func newFake(t *testing.T, turns [][]contracts.Block) *httptest.Server {
	f := &fake{t: t, turns: turns}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

type wireRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	System    []struct {
		Text string `json:"text"`
	} `json:"system"`
	Messages []struct {
		Role    string      `json:"role"`
		Content []wireBlock `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"input_schema"`
	} `json:"tools"`
}

// check reports what is wrong with a request, or "".
func check(r *http.Request, req *wireRequest) string {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		return fmt.Sprintf("%s %s, want POST /v1/messages", r.Method, r.URL.Path)
	}
	if r.Header.Get("Authorization") != "Bearer "+fakeKey && r.Header.Get("X-Api-Key") != fakeKey {
		return "the request does not carry the key"
	}
	if req.Model != fakeModel || req.MaxTokens <= 0 {
		return fmt.Sprintf("model %q, max_tokens %d", req.Model, req.MaxTokens)
	}
	if len(req.Tools) == 0 || req.Tools[0].Name == "" || req.Tools[0].InputSchema["type"] != "object" {
		return fmt.Sprintf("tools %+v, want named tools with an object input_schema", req.Tools)
	}
	if len(req.Messages) == 0 || req.Messages[0].Role != contracts.RoleUser {
		return "messages must start with a user turn"
	}
	uses := map[string]bool{}
	for _, m := range req.Messages {
		if len(m.Content) == 0 {
			return "a message without content blocks"
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
			case "tool_use":
				if b.ID == "" || b.Name == "" || len(b.Input) == 0 || m.Role != contracts.RoleAssistant {
					return fmt.Sprintf("bad tool_use %+v", b)
				}
				uses[b.ID] = true
			case "tool_result":
				if !uses[b.ToolUseID] || m.Role != contracts.RoleUser {
					return fmt.Sprintf("tool_result for unknown tool_use %q", b.ToolUseID)
				}
			case "thinking":
				if b.Signature == "" {
					return "thinking without signature"
				}
			default:
				return fmt.Sprintf("block type %q", b.Type)
			}
		}
	}
	return ""
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req wireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("fake: request body: %v", err)
	}
	if msg := check(r, &req); msg != "" {
		f.t.Errorf("fake: bad request: %s\n%s", msg, body)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	if f.next >= len(f.turns) {
		f.mu.Unlock()
		f.t.Errorf("fake: no turn %d", f.next+1)
		http.Error(w, "no more turns", http.StatusInternalServerError)
		return
	}
	turn := f.turns[f.next]
	f.next++
	msg := f.message(turn)
	f.mu.Unlock()
	if req.Stream {
		writeSSE(w, msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(msg)
}

type wireMessage struct {
	ID         string      `json:"id"`
	Type       string      `json:"type"`
	Role       string      `json:"role"`
	Model      string      `json:"model"`
	Content    []wireBlock `json:"content"`
	StopReason string      `json:"stop_reason"`
	Usage      struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func (f *fake) message(turn []contracts.Block) wireMessage {
	msg := wireMessage{ID: "msg_1", Type: "message", Role: "assistant", Model: fakeModel, StopReason: "end_turn"}
	msg.Usage.InputTokens, msg.Usage.OutputTokens = fakeInputTokens, fakeOutputTokens
	for _, b := range turn {
		wb := wireBlock{Type: b.Type, Text: b.Text}
		switch b.Type {
		case contracts.BlockThinking:
			wb = wireBlock{Type: b.Type, Thinking: b.Text, Signature: "sig"}
		case contracts.BlockToolUse:
			f.ids++
			wb = wireBlock{Type: b.Type, ID: fmt.Sprintf("toolu_%d", f.ids), Name: b.Name, Input: b.Input}
			msg.StopReason = "tool_use"
		}
		msg.Content = append(msg.Content, wb)
	}
	return msg
}

// writeSSE streams msg the way the Messages API does, splitting text and
// tool input into several deltas.
func writeSSE(w http.ResponseWriter, msg wireMessage) {
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, v any) {
		raw, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, raw)
	}
	start := msg
	start.Content, start.StopReason = []wireBlock{}, ""
	send("message_start", map[string]any{"type": "message_start", "message": start})
	for i, b := range msg.Content {
		empty := b
		empty.Text, empty.Thinking, empty.Signature, empty.Input = "", "", "", json.RawMessage(`{}`)
		if b.Type != contracts.BlockToolUse {
			empty.Input = nil
		}
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": empty})
		for _, d := range deltas(b) {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": msg.StopReason}, "usage": map[string]int{"output_tokens": msg.Usage.OutputTokens}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

func deltas(b wireBlock) []map[string]string {
	var out []map[string]string
	switch b.Type {
	case contracts.BlockText:
		for _, part := range halves(b.Text) {
			out = append(out, map[string]string{"type": "text_delta", "text": part})
		}
	case contracts.BlockThinking:
		for _, part := range halves(b.Thinking) {
			out = append(out, map[string]string{"type": "thinking_delta", "thinking": part})
		}
		out = append(out, map[string]string{"type": "signature_delta", "signature": b.Signature})
	case contracts.BlockToolUse:
		for _, part := range halves(string(b.Input)) {
			out = append(out, map[string]string{"type": "input_json_delta", "partial_json": part})
		}
	}
	return out
}

func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}
