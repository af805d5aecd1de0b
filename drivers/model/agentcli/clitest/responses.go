package clitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// responsesRequest is what the fake reads of a Responses API request.
type responsesRequest struct {
	Model  string            `json:"model"`
	Input  []json.RawMessage `json:"input"`
	Tools  []json.RawMessage `json:"tools"`
	Stream bool              `json:"stream"`
}

// NewResponses starts a fake of the Responses API (POST /v1/responses,
// streamed as SSE) that answers requests with turns in order, naming each
// function call as the request named the kernel's tool.
func NewResponses(t TB, turns [][]contracts.Block) *Fake {
	f := newFake(t, turns)
	f.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
			http.Error(w, `{"error":{"message":"not here"}}`, http.StatusNotFound)
			return
		}
		var req responsesRequest
		body, ok := f.read(w, r, &req)
		if !ok {
			return
		}
		f.record(body)
		writeResponsesSSE(w, req, f.nextTurn(), f.toolID)
	}))
	return f
}

// toolNamed returns the name (and the namespace, codex's for an MCP
// server's tools) the request gives the kernel's tool name.
func toolNamed(req responsesRequest, name string) (string, string) {
	for _, raw := range req.Tools {
		var tool struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(raw, &tool)
		if tool.Name == name || strings.HasSuffix(tool.Name, "__"+name) {
			return tool.Name, ""
		}
		for _, inner := range tool.Tools {
			if tool.Type == "namespace" && inner.Name == name {
				return name, tool.Name
			}
		}
	}
	return "mcp__sms__" + name, ""
}

// writeResponsesSSE streams turn as the Responses API's events.
func writeResponsesSSE(w http.ResponseWriter, req responsesRequest, turn []contracts.Block, id func() string) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(data map[string]any) {
		raw, _ := json.Marshal(data)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], raw)
	}
	resp := map[string]any{"id": "resp_fake", "object": "response", "status": "in_progress", "model": req.Model, "output": []any{}}
	ev(map[string]any{"type": "response.created", "response": resp})
	var output []any
	for i, b := range turn {
		var item map[string]any
		switch b.Type {
		case contracts.BlockText:
			item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", i), "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": b.Text, "annotations": []any{}}}}
			ev(map[string]any{"type": "response.output_item.added", "output_index": i, "item": map[string]any{
				"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{}}})
			ev(map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": i, "content_index": 0, "delta": b.Text})
		case contracts.BlockThinking:
			item = map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_%d", i),
				"summary": []any{map[string]any{"type": "summary_text", "text": b.Text}}}
			ev(map[string]any{"type": "response.output_item.added", "output_index": i, "item": item})
		case contracts.BlockToolUse:
			call := id()
			name, namespace := toolNamed(req, b.Name)
			item = map[string]any{"type": "function_call", "id": "fc_" + call, "call_id": call, "name": name,
				"arguments": string(b.Input), "status": "completed"}
			if namespace != "" {
				item["namespace"] = namespace
			}
			ev(map[string]any{"type": "response.output_item.added", "output_index": i, "item": item})
		default:
			continue
		}
		ev(map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
		output = append(output, item)
	}
	resp["status"], resp["output"] = "completed", output
	resp["usage"] = map[string]any{"input_tokens": 10, "output_tokens": 10, "total_tokens": 20,
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	ev(map[string]any{"type": "response.completed", "response": resp})
}
