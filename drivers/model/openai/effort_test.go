package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/openai"
)

// A streamed reasoning model: a summary in two deltas, then the text.
var reasoningStream = strings.Join([]string{
	`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-test","output":[]}}`,
	`{"type":"response.reasoning_summary_text.delta","sequence_number":1,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Count "}`,
	`{"type":"response.reasoning_summary_text.delta","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"them."}`,
	`{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Three."}`,
	`{"type":"response.completed","sequence_number":4,"response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-test","output":[` +
		`{"type":"reasoning","id":"rs_1","encrypted_content":"ENC","summary":[{"type":"summary_text","text":"Count them."}]},` +
		`{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Three.","annotations":[]}]}]}}`,
}, "\n")

// The effort goes out with a request for reasoning summaries, and the
// summary's deltas stream as thinking deltas, once each; an unknown
// effort is a setting error. Seen failing with params not setting
// Reasoning, and with the stream's final replay not skipping thinking.
func TestEffortStreamsReasoning(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range strings.Split(reasoningStream, "\n") {
			_, _ = fmt.Fprintf(w, "data: %s\n\n", ev)
		}
	}))
	defer srv.Close()
	m, err := openai.New(openai.Options{APIKey: "sk", BaseURL: srv.URL, Model: "gpt-test", Effort: "high", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var thinking []string
	for ev, err := range m.Stream(context.Background(), request) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == contracts.EventThinkingDelta {
			thinking = append(thinking, ev.Text)
		}
	}
	if strings.Join(thinking, "|") != "Count |them." {
		t.Errorf("thinking deltas = %q, want the summary's two deltas once", thinking)
	}
	if raw, _ := json.Marshal(body["reasoning"]); string(raw) != `{"effort":"high","summary":"auto"}` {
		t.Errorf("reasoning = %s, want the effort and summaries", raw)
	}
	var se *contracts.SettingError
	if _, err := openai.New(openai.Options{APIKey: "sk", Model: "gpt-test", Effort: "huge"}); !errors.As(err, &se) {
		t.Errorf("an unknown effort = %v, want a setting error", err)
	}
}
