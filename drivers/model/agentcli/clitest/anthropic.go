package clitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// anthropicRequest is what the fake reads of a Messages API request.
type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// NewAnthropic starts a fake of the Messages API (POST /v1/messages, as
// JSON or as SSE when the request streams) that answers the requests of
// an agent's loop, those offering one of the kernel's tools, with turns
// in order, naming each tool_use as the CLI names the kernel's tool.
// Any other request (a CLI's side calls) gets a short text.
func NewAnthropic(t TB, turns [][]contracts.Block) *Fake {
	f := newFake(t, turns)
	f.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not here"}}`, http.StatusNotFound)
			return
		}
		var req anthropicRequest
		body, ok := f.read(w, r, &req)
		if !ok {
			return
		}
		turn := []contracts.Block{{Type: contracts.BlockText, Text: "ok"}}
		if offersKernelTool(req.Tools) {
			f.record(body)
			turn = f.nextTurn()
		}
		msg := anthropicMessage(req.Model, turn, f.toolID)
		if req.Stream {
			writeAnthropicSSE(w, msg)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(msg)
	}))
	return f
}

func offersKernelTool(tools []struct {
	Name string `json:"name"`
}) bool {
	for _, t := range tools {
		if strings.HasPrefix(t.Name, "mcp__") {
			return true
		}
	}
	return false
}

// anthropicMessage is turn as a Messages API message.
func anthropicMessage(model string, turn []contracts.Block, id func() string) map[string]any {
	content := []map[string]any{}
	stop := contracts.StopEndTurn
	for _, b := range turn {
		switch b.Type {
		case contracts.BlockText:
			content = append(content, map[string]any{"type": "text", "text": b.Text})
		case contracts.BlockThinking:
			content = append(content, map[string]any{"type": "thinking", "thinking": b.Text, "signature": "sig"})
		case contracts.BlockToolUse:
			content = append(content, map[string]any{"type": "tool_use", "id": id(), "name": "mcp__sms__" + b.Name, "input": b.Input})
			stop = contracts.StopToolUse
		}
	}
	return map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 10}}
}

// writeAnthropicSSE streams msg as the Messages API's events.
func writeAnthropicSSE(w http.ResponseWriter, msg map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(typ string, data map[string]any) {
		data["type"] = typ
		raw, _ := json.Marshal(data)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, raw)
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	ev("message_start", map[string]any{"message": start})
	for i, b := range msg["content"].([]map[string]any) {
		switch b["type"] {
		case "text":
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "thinking":
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "thinking", "thinking": ""}})
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": b["thinking"]}})
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "signature_delta", "signature": b["signature"]}})
		case "tool_use":
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}})
		}
		ev("content_block_stop", map[string]any{"index": i})
	}
	ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	ev("message_stop", map[string]any{})
}
