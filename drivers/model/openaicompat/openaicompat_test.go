package openaicompat_test

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
	"github.com/sms-baseline/sms/drivers/model/modeltest"
	"github.com/sms-baseline/sms/drivers/model/openaicompat"
)

var request = contracts.ModelRequest{
	System:   "You are a test.",
	Messages: []contracts.Message{{Role: contracts.RoleUser, Content: []contracts.Block{{Type: contracts.BlockText, Text: "hi"}}}},
	Tools:    []contracts.Tool{{Name: "overdue", InputSchema: json.RawMessage(`{"type":"object","properties":{"min":{"type":"number"}}}`)}},
}

func newModel(t *testing.T, url string, retries int) *openaicompat.Model {
	t.Helper()
	m, err := openaicompat.New(openaicompat.Options{APIKey: fakeKey, BaseURL: url, Model: fakeModel, MaxRetries: retries})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The fake fails the test when the request lacks the model, the key, the
// tools or well-formed messages; seen failing with the tools left out of
// the request.
func TestConformance(t *testing.T) {
	modeltest.Run(t, func(t *testing.T, turns [][]contracts.Block) contracts.ModelService {
		return newModel(t, newFake(t, turns).URL, 0)
	})
}

// The key and base URL given are used even when the environment names
// others. Seen failing with the explicit key option removed (the
// environment's key was sent).
func TestIgnoresEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1")
	turn := []contracts.Block{{Type: contracts.BlockText, Text: "ok"}}
	if _, err := newModel(t, newFake(t, [][]contracts.Block{turn}).URL, -1).Complete(context.Background(), request); err != nil {
		t.Fatal(err)
	}
}

// Argument deltas of a streamed tool call arrive as one whole tool_use
// event, and the tool result goes back as a role "tool" message (the fake
// checks it names a known call). Seen failing with accumulator.add
// overwriting instead of appending the argument deltas.
func TestStreamAssemblesToolCall(t *testing.T) {
	turn := []contracts.Block{{Type: contracts.BlockToolUse, Name: "overdue", Input: json.RawMessage(`{"min":12345}`)}}
	m := newModel(t, newFake(t, [][]contracts.Block{turn, {{Type: contracts.BlockText, Text: "done"}}}).URL, 0)
	var uses []contracts.Block
	var done *contracts.ModelResponse
	for ev, err := range m.Stream(context.Background(), request) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == contracts.EventToolUse {
			uses = append(uses, *ev.Block)
		}
		if ev.Type == contracts.EventDone {
			done = ev.Response
		}
	}
	if len(uses) != 1 || string(uses[0].Input) != `{"min":12345}` || uses[0].ID == "" || done == nil || done.StopReason != contracts.StopToolUse {
		t.Fatalf("tool uses %+v, done %+v; want one whole call", uses, done)
	}
	req := request
	req.Messages = append(append([]contracts.Message{}, request.Messages...),
		contracts.Message{Role: contracts.RoleAssistant, Content: done.Content},
		contracts.Message{Role: contracts.RoleUser, Content: []contracts.Block{{Type: contracts.BlockToolResult, ToolUseID: uses[0].ID, Content: "[]"}}})
	if resp, err := m.Complete(context.Background(), req); err != nil || resp.Content[0].Text != "done" {
		t.Fatalf("Complete = %+v, %v", resp, err)
	}
}

// An error object sent with HTTP 200 is an error, not an empty answer.
// Seen failing with the error object check disabled: the call returned an
// empty response instead.
func TestErrorBodyWithStatus200(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"error":{"message":"Overloaded","code":502}}`))
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
			_, _ = w.Write([]byte(`{"error":{"message":"slow down"}}`))
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

func TestNewRequiresKeyURLAndModel(t *testing.T) {
	for _, o := range []openaicompat.Options{{Model: "m", BaseURL: "u"}, {APIKey: "k", Model: "m"}, {APIKey: "k", BaseURL: "u"}} {
		if _, err := openaicompat.New(o); err == nil {
			t.Fatalf("New(%+v) must fail", o)
		}
	}
}

// TestLiveOpenAICompat calls a real endpoint when SMS_LIVE_MODELS=1 and
// OPENAICOMPAT_API_KEY, OPENAICOMPAT_BASE_URL and OPENAICOMPAT_MODEL are set.
func TestLiveOpenAICompat(t *testing.T) {
	key, url, model := os.Getenv("OPENAICOMPAT_API_KEY"), os.Getenv("OPENAICOMPAT_BASE_URL"), os.Getenv("OPENAICOMPAT_MODEL")
	if os.Getenv("SMS_LIVE_MODELS") != "1" || key == "" || url == "" || model == "" {
		t.Skip("set SMS_LIVE_MODELS=1 and OPENAICOMPAT_API_KEY, OPENAICOMPAT_BASE_URL, OPENAICOMPAT_MODEL to call a live endpoint")
	}
	m, err := openaicompat.New(openaicompat.Options{APIKey: key, BaseURL: url, Model: model, MaxTokens: 256})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(context.Background(), contracts.ModelRequest{Messages: request.Messages})
	if err != nil || len(resp.Content) == 0 {
		t.Fatalf("live Complete = %+v, %v", resp, err)
	}
}
