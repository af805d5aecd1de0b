package openaicompat_test

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
	fakeModel = "test/model"
)

// fake answers each Chat Completions call with the next turn, as JSON or
// SSE, after checking the request is in the Chat Completions shape.
type fake struct {
	t     *testing.T
	mu    sync.Mutex
	turns [][]contracts.Block
	next  int
	ids   int
}

func newFake(t *testing.T, turns [][]contracts.Block) *httptest.Server {
	srv := httptest.NewServer(&fake{t: t, turns: turns})
	t.Cleanup(srv.Close)
	return srv
}

type wireCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string     `json:"role"`
		Content    any        `json:"content"`
		ToolCallID string     `json:"tool_call_id"`
		ToolCalls  []wireCall `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func check(r *http.Request, req *wireRequest) string {
	if r.Method != http.MethodPost || r.URL.Path != "/chat/completions" {
		return fmt.Sprintf("%s %s", r.Method, r.URL.Path)
	}
	if r.Header.Get("Authorization") != "Bearer "+fakeKey {
		return "the request does not carry the key"
	}
	if req.Model != fakeModel {
		return fmt.Sprintf("model %q", req.Model)
	}
	if len(req.Tools) == 0 || req.Tools[0].Type != "function" || req.Tools[0].Function.Name == "" || req.Tools[0].Function.Parameters["type"] != "object" {
		return "tools must be function tools with parameters"
	}
	if len(req.Messages) < 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		return "messages must be system then user"
	}
	calls := map[string]bool{}
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			if m.Role != "assistant" || c.ID == "" || c.Type != "function" || !json.Valid([]byte(c.Function.Arguments)) {
				return fmt.Sprintf("bad tool call %+v", c)
			}
			calls[c.ID] = true
		}
		if m.Role == "tool" && (!calls[m.ToolCallID] || m.Content == nil) {
			return fmt.Sprintf("tool message for unknown call %q", m.ToolCallID)
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
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	if f.next >= len(f.turns) {
		f.mu.Unlock()
		f.t.Errorf("fake: no turn %d", f.next+1)
		http.Error(w, "no more turns", http.StatusInternalServerError)
		return
	}
	text, calls, finish := f.choice(f.turns[f.next])
	f.next++
	f.mu.Unlock()
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		msg := map[string]any{"role": "assistant", "content": text}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "model": fakeModel,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(delta map[string]any, finish any) {
		raw, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": fakeModel,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		_, _ = fmt.Fprintf(w, "data: %s\n\n", raw)
	}
	for _, part := range []string{text[:len(text)/2], text[len(text)/2:]} {
		send(map[string]any{"content": part}, nil)
	}
	for _, c := range calls {
		args := c.Function.Arguments
		first := c
		first.Function.Arguments = args[:len(args)/2]
		send(map[string]any{"tool_calls": []wireCall{first}}, nil)
		rest := wireCall{Index: c.Index}
		rest.Function.Arguments = args[len(args)/2:]
		send(map[string]any{"tool_calls": []wireCall{rest}}, nil)
	}
	send(map[string]any{}, finish)
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
}

func (f *fake) choice(turn []contracts.Block) (string, []wireCall, string) {
	var text string
	var calls []wireCall
	finish := "stop"
	for _, b := range turn {
		switch b.Type {
		case contracts.BlockText:
			text += b.Text
		case contracts.BlockToolUse:
			f.ids++
			c := wireCall{Index: len(calls), ID: fmt.Sprintf("call_%d", f.ids), Type: "function"}
			c.Function.Name, c.Function.Arguments = b.Name, string(b.Input)
			calls = append(calls, c)
			finish = "tool_calls"
		}
	}
	return text, calls, finish
}
