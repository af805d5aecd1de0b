package openaicompat_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/openaicompat"
)

// Recorded shapes of OpenRouter's answers: reasoning with its details,
// then a tool call.
const (
	reasoningAnswer = `{"id":"gen-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
 "message":{"role":"assistant","content":"","reasoning":"Look up overdue invoices.",
  "reasoning_details":[{"type":"reasoning.text","text":"Look up overdue invoices.","signature":"SIG","format":"anthropic-claude-v1","index":0}],
  "tool_calls":[{"id":"call_1","type":"function","function":{"name":"overdue","arguments":"{\"min\":1}"}}]}}]}`
	finalAnswer = `{"id":"gen-2","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop",
 "message":{"role":"assistant","content":"done"}}]}`
)

// openRouter answers with answers in order and keeps each request's
// body and headers.
type openRouter struct {
	mu      sync.Mutex
	answers []string
	bodies  []map[string]any
	headers []http.Header
}

func (o *openRouter) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		o.mu.Lock()
		o.bodies, o.headers = append(o.bodies, body), append(o.headers, r.Header.Clone())
		answer := o.answers[0]
		o.answers = o.answers[1:]
		o.mu.Unlock()
		if strings.HasPrefix(answer, "data:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func openRouterModel(t *testing.T, url string, opts openaicompat.Options) *openaicompat.Model {
	t.Helper()
	opts.APIKey, opts.BaseURL, opts.Model, opts.MaxRetries = fakeKey, url, fakeModel, -1
	m, err := openaicompat.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The effort goes out as OpenRouter's unified reasoning setting, with the
// attribution headers; reasoning comes back as a thinking block carrying
// its details, which go back unchanged on the assistant message of the
// tool call when the loop replays that turn. Seen failing with the
// reasoning extra field removed, with the X-Title header removed, and with
// toMessages not replaying the details.
func TestOpenRouterReasoningIsReplayed(t *testing.T) {
	o := &openRouter{answers: []string{reasoningAnswer, finalAnswer}}
	m := openRouterModel(t, o.serve(t), openaicompat.Options{Effort: "high", AppName: "Invoices", SiteURL: "https://invoices.example"})
	first, err := m.Complete(context.Background(), request)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Content) != 2 || first.Content[0].Type != contracts.BlockThinking || first.Content[0].Text != "Look up overdue invoices." ||
		!strings.Contains(first.Content[0].Signature, `"signature":"SIG"`) || first.Content[1].Type != contracts.BlockToolUse {
		t.Fatalf("first = %+v, want the thinking with its details, then the tool call", first)
	}
	req := request
	req.Messages = append(append([]contracts.Message{}, request.Messages...),
		contracts.Message{Role: contracts.RoleAssistant, Content: first.Content},
		contracts.Message{Role: contracts.RoleUser, Content: []contracts.Block{{Type: contracts.BlockToolResult, ToolUseID: "call_1", Content: "[]"}}})
	if _, err := m.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := o.bodies[0]["reasoning"]; !jsonEqual(got, map[string]any{"effort": "high"}) {
		t.Errorf("reasoning setting = %v, want {effort: high}", got)
	}
	if h := o.headers[0]; h.Get("X-Title") != "Invoices" || h.Get("HTTP-Referer") != "https://invoices.example" {
		t.Errorf("attribution headers = %q, %q", h.Get("X-Title"), h.Get("HTTP-Referer"))
	}
	msgs, _ := o.bodies[1]["messages"].([]any)
	var assistant map[string]any
	for _, msg := range msgs {
		if mm, _ := msg.(map[string]any); mm["role"] == "assistant" {
			assistant = mm
		}
	}
	details, _ := assistant["reasoning_details"].([]any)
	if len(details) != 1 || !jsonEqual(details[0], map[string]any{"type": "reasoning.text", "text": "Look up overdue invoices.",
		"signature": "SIG", "format": "anthropic-claude-v1", "index": 0.0}) {
		t.Errorf("replayed assistant message = %v, want the reasoning details unchanged", assistant)
	}
}

// A thinking budget goes out as the reasoning token budget; an effort and
// a budget together, or an unknown effort, are refused naming the
// setting. Seen failing with checkReasoning accepting both.
func TestOpenRouterBudgetAndBadSettings(t *testing.T) {
	o := &openRouter{answers: []string{finalAnswer}}
	m := openRouterModel(t, o.serve(t), openaicompat.Options{ThinkingBudget: 2000})
	if _, err := m.Complete(context.Background(), request); err != nil {
		t.Fatal(err)
	}
	if got := o.bodies[0]["reasoning"]; !jsonEqual(got, map[string]any{"max_tokens": 2000.0}) {
		t.Errorf("reasoning setting = %v, want {max_tokens: 2000}", got)
	}
	for _, opts := range []openaicompat.Options{{Effort: "high", ThinkingBudget: 2000}, {Effort: "huge"}} {
		opts.APIKey, opts.BaseURL, opts.Model = fakeKey, "http://127.0.0.1:1", fakeModel
		_, err := openaicompat.New(opts)
		var se *contracts.SettingError
		if err == nil || !errors.As(err, &se) {
			t.Errorf("New(%+v) = %v, want a setting error", opts, err)
		}
	}
}

// Streamed reasoning arrives as thinking deltas, its detail pieces joined
// into one detail. Seen failing with merge appending every piece.
func TestOpenRouterStreamsReasoning(t *testing.T) {
	stream := `data: {"id":"g","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","reasoning":"Look ","reasoning_details":[{"type":"reasoning.text","text":"Look ","index":0}]}}]}

data: {"id":"g","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning":"up.","reasoning_details":[{"type":"reasoning.text","text":"up.","signature":"SIG","index":0}]}}]}

data: {"id":"g","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}

data: [DONE]

`
	o := &openRouter{answers: []string{stream}}
	m := openRouterModel(t, o.serve(t), openaicompat.Options{Effort: "low"})
	var thinking strings.Builder
	var done *contracts.ModelResponse
	for ev, err := range m.Stream(context.Background(), request) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case contracts.EventThinkingDelta:
			thinking.WriteString(ev.Text)
		case contracts.EventDone:
			done = ev.Response
		}
	}
	if thinking.String() != "Look up." || done == nil || len(done.Content) != 2 {
		t.Fatalf("thinking %q, done %+v", thinking.String(), done)
	}
	var details []map[string]any
	if err := json.Unmarshal([]byte(done.Content[0].Signature), &details); err != nil || len(details) != 1 ||
		details[0]["text"] != "Look up." || details[0]["signature"] != "SIG" {
		t.Fatalf("details = %s, want one detail with the joined text and the signature", done.Content[0].Signature)
	}
}

// Errors OpenRouter sends with HTTP 200 inside a choice, as a finish
// reason, or in a chunk mid-stream fail the call. Seen failing with
// choiceError returning nil.
func TestOpenRouterErrorsInsideAnswers(t *testing.T) {
	inChoice := `{"id":"g","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"error",` +
		`"error":{"code":502,"message":"upstream down"},"message":{"role":"assistant","content":""}}]}`
	finishOnly := `{"id":"g","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"error","message":{"role":"assistant","content":"par"}}]}`
	midStream := "data: {\"id\":\"g\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n" +
		"data: {\"id\":\"g\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"error\":{\"code\":502,\"message\":\"upstream down\"},\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"error\"}]}\n\n"
	o := &openRouter{answers: []string{inChoice, finishOnly, midStream}}
	m := openRouterModel(t, o.serve(t), openaicompat.Options{})
	for i := range 2 {
		if _, err := m.Complete(context.Background(), request); err == nil || !strings.Contains(err.Error(), "error") {
			t.Errorf("answer %d: Complete = %v, want the provider's error", i+1, err)
		}
	}
	var streamErr error
	for _, err := range m.Stream(context.Background(), request) {
		if err != nil {
			streamErr = err
		}
	}
	if streamErr == nil || !strings.Contains(streamErr.Error(), "upstream down") {
		t.Errorf("stream error = %v, want the provider's error", streamErr)
	}
}

func jsonEqual(a, b any) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}
