package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/anthropic"
	"github.com/sms-baseline/sms/drivers/model/modeltest"
)

var request = contracts.ModelRequest{
	System:   "You are a test.",
	Messages: []contracts.Message{{Role: contracts.RoleUser, Content: []contracts.Block{{Type: contracts.BlockText, Text: "hi"}}}},
	Tools:    []contracts.Tool{{Name: "overdue", InputSchema: json.RawMessage(`{"type":"object","properties":{"min":{"type":"number"}}}`)}},
}

func newModel(t *testing.T, url string, retries int) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New(anthropic.Options{APIKey: fakeKey, BaseURL: url, Model: fakeModel, MaxRetries: retries})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The fake fails the test when the request lacks the model, the key, the
// tools or well-formed messages; seen failing when toTool's input schema
// was left out of the request.
func TestConformance(t *testing.T) {
	modeltest.Run(t, func(t *testing.T, turns [][]contracts.Block) contracts.ModelService {
		return newModel(t, newFake(t, turns).URL, 0)
	})
}

// The key and base URL given are used even when the environment names
// others. Seen failing with option.WithoutEnvironmentDefaults and the
// explicit key removed (the environment's key was sent).
func TestIgnoresEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	turn := []contracts.Block{{Type: contracts.BlockText, Text: "ok"}}
	if _, err := newModel(t, newFake(t, [][]contracts.Block{turn}).URL, -1).Complete(context.Background(), request); err != nil {
		t.Fatal(err)
	}
}

// Thinking comes back with its signature, streamed as thinking deltas, and
// is replayed before the tool call on the next request (the fake refuses a
// thinking block without signature). Seen failing with toMessage dropping
// the signature.
func TestThinkingReplayed(t *testing.T) {
	turn := []contracts.Block{
		{Type: contracts.BlockThinking, Text: "They want overdue invoices."},
		{Type: contracts.BlockToolUse, Name: "overdue", Input: json.RawMessage(`{"min":1}`)},
	}
	m := newModel(t, newFake(t, [][]contracts.Block{turn, {{Type: contracts.BlockText, Text: "done"}}}).URL, 0)
	var thinking strings.Builder
	var done *contracts.ModelResponse
	for ev, err := range m.Stream(context.Background(), request) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == contracts.EventThinkingDelta {
			thinking.WriteString(ev.Text)
		}
		if ev.Type == contracts.EventDone {
			done = ev.Response
		}
	}
	if done == nil || thinking.String() != turn[0].Text || done.Content[0].Signature != "sig" {
		t.Fatalf("thinking %q, done %+v; want the thinking with its signature", thinking.String(), done)
	}
	req := request
	req.Messages = append(append([]contracts.Message{}, request.Messages...),
		contracts.Message{Role: contracts.RoleAssistant, Content: done.Content},
		contracts.Message{Role: contracts.RoleUser, Content: []contracts.Block{{Type: contracts.BlockToolResult, ToolUseID: done.Content[1].ID, Content: "[]"}}})
	if _, err := m.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

// Complete and Stream both report the tokens the provider billed; seen
// failing with fromMessage leaving Usage out.
func TestUsageReported(t *testing.T) {
	turn := []contracts.Block{{Type: contracts.BlockText, Text: "hello"}}
	srv := newFake(t, [][]contracts.Block{turn, turn})
	m := newModel(t, srv.URL, -1)
	want := contracts.TokenUsage{InputTokens: fakeInputTokens, OutputTokens: fakeOutputTokens}
	resp, err := m.Complete(context.Background(), request)
	if err != nil || resp.Usage == nil || *resp.Usage != want {
		t.Fatalf("Complete: usage %+v, %v; want %+v", resp.Usage, err, want)
	}
	done := false
	for ev, err := range m.Stream(context.Background(), request) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == contracts.EventDone {
			done = true
			if ev.Response.Usage == nil || *ev.Response.Usage != want {
				t.Fatalf("Stream: usage %+v, want %+v", ev.Response.Usage, want)
			}
		}
	}
	if !done {
		t.Fatal("Stream ended without done")
	}
}

// An error object sent with HTTP 200 is an error, not an empty answer.
// Seen failing with bodyError's error check disabled: the call returned
// an empty response and no error.
func TestErrorBodyWithStatus200(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	}))
	defer srv.Close()
	_, err := newModel(t, srv.URL, -1).Complete(context.Background(), request)
	if err == nil || !strings.Contains(err.Error(), "Overloaded") {
		t.Fatalf("Complete = %v, want the provider's error", err)
	}
}

// A 429 with Retry-After is retried and the call then succeeds; with
// retries disabled it fails. Seen failing with MaxRetries forced to 0.
func TestRetriesRateLimit(t *testing.T) {
	inner := newFake(t, [][]contracts.Block{{{Type: contracts.BlockText, Text: "ok"}}})
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`))
			return
		}
		inner.Config.Handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	resp, err := newModel(t, srv.URL, 2).Complete(context.Background(), request)
	if err != nil || calls.Load() != 2 || resp.Content[0].Text != "ok" {
		t.Fatalf("Complete = %+v, %v after %d calls; want success on the second", resp, err, calls.Load())
	}
	calls.Store(0)
	if _, err := newModel(t, srv.URL, -1).Complete(context.Background(), request); err == nil {
		t.Fatal("with retries disabled a 429 must fail")
	}
}

// Cancelling while the server is slow ends the call with context.Canceled,
// streaming or not. Seen failing with wrapErr formatting the client's error
// with %v instead of wrapping it.
func TestCancelledWhileWaiting(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	m := newModel(t, srv.URL, -1)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := m.Complete(ctx, request); !errors.Is(err, context.Canceled) {
		t.Fatalf("Complete = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	for _, err := range m.Stream(ctx, request) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Stream = %v, want context.Canceled", err)
		}
	}
}

func TestNewRequiresKeyAndModel(t *testing.T) {
	if _, err := anthropic.New(anthropic.Options{Model: "m"}); err == nil {
		t.Fatal("New without a key must fail")
	}
	if _, err := anthropic.New(anthropic.Options{APIKey: "k"}); err == nil {
		t.Fatal("New without a model must fail")
	}
}

// TestLiveAnthropic calls the real API when SMS_LIVE_MODELS=1 and
// ANTHROPIC_API_KEY are set (ANTHROPIC_MODEL picks the model).
func TestLiveAnthropic(t *testing.T) {
	key := os.Getenv("ANTHROPIC_API_KEY")
	if os.Getenv("SMS_LIVE_MODELS") != "1" || key == "" {
		t.Skip("set SMS_LIVE_MODELS=1 and ANTHROPIC_API_KEY to call the live API")
	}
	model := os.Getenv("ANTHROPIC_MODEL")
	if model == "" {
		model = "claude-haiku-4-5"
	}
	m, err := anthropic.New(anthropic.Options{APIKey: key, Model: model, MaxTokens: 256})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(context.Background(), contracts.ModelRequest{Messages: request.Messages})
	if err != nil || len(resp.Content) == 0 {
		t.Fatalf("live Complete = %+v, %v", resp, err)
	}
}
