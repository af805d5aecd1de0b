package openai_test

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
	fakeModel = "gpt-test"
)

// fake answers each Responses call with the next turn, as JSON or SSE,
// after checking the request is in the Responses API's shape.
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

type wireRequest struct {
	Model        string `json:"model"`
	Stream       bool   `json:"stream"`
	Store        *bool  `json:"store"`
	Instructions string `json:"instructions"`
	Input        []struct {
		Type      string `json:"type"`
		Role      string `json:"role"`
		Content   any    `json:"content"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Output    any    `json:"output"`
	} `json:"input"`
	Tools []struct {
		Type       string         `json:"type"`
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	} `json:"tools"`
}

func check(r *http.Request, req *wireRequest) string {
	if r.Method != http.MethodPost || r.URL.Path != "/responses" {
		return fmt.Sprintf("%s %s", r.Method, r.URL.Path)
	}
	if r.Header.Get("Authorization") != "Bearer "+fakeKey {
		return "the request does not carry the key"
	}
	if req.Model != fakeModel || req.Store == nil || *req.Store {
		return fmt.Sprintf("model %q, store %v; want the model and store false", req.Model, req.Store)
	}
	if len(req.Tools) == 0 || req.Tools[0].Type != "function" || req.Tools[0].Name == "" || req.Tools[0].Parameters["type"] != "object" {
		return "tools must be function tools with parameters"
	}
	if len(req.Input) == 0 || req.Input[0].Role != "user" {
		return "input must start with a user message"
	}
	calls := map[string]bool{}
	for _, in := range req.Input {
		switch in.Type {
		case "message", "":
			if in.Role == "" || in.Content == nil {
				return "a message item needs a role and content"
			}
		case "function_call":
			if in.CallID == "" || in.Name == "" || !json.Valid([]byte(in.Arguments)) {
				return fmt.Sprintf("bad function_call %+v", in)
			}
			calls[in.CallID] = true
		case "function_call_output":
			if !calls[in.CallID] || in.Output == nil {
				return fmt.Sprintf("function_call_output for unknown call %q", in.CallID)
			}
		default:
			return fmt.Sprintf("item type %q", in.Type)
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
	resp, texts := f.response(f.turns[f.next])
	f.next++
	f.mu.Unlock()
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	seq := 0
	send := func(v map[string]any) {
		seq++
		v["sequence_number"] = seq
		raw, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], raw)
	}
	for _, text := range texts {
		for _, part := range []string{text[:len(text)/2], text[len(text)/2:]} {
			send(map[string]any{"type": "response.output_text.delta", "delta": part, "item_id": "msg_1", "output_index": 0, "content_index": 0})
		}
	}
	send(map[string]any{"type": "response.completed", "response": resp})
}

func (f *fake) response(turn []contracts.Block) (map[string]any, []string) {
	var output []any
	var texts []string
	for _, b := range turn {
		switch b.Type {
		case contracts.BlockText:
			texts = append(texts, b.Text)
			output = append(output, map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": b.Text, "annotations": []any{}}}})
		case contracts.BlockToolUse:
			f.ids++
			output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", f.ids),
				"call_id": fmt.Sprintf("call_%d", f.ids), "name": b.Name, "arguments": string(b.Input), "status": "completed"})
		}
	}
	return map[string]any{"id": "resp_1", "object": "response", "status": "completed", "model": fakeModel, "output": output}, texts
}
