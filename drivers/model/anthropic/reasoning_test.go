package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/anthropic"
)

// capture answers every request with one text message and keeps the
// bodies.
func capture(t *testing.T) (string, *[]map[string]any) {
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		bodies = append(bodies, body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &bodies
}

func jsonOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// An effort asks for adaptive thinking at that effort; a budget asks for
// extended thinking with it, max_tokens above it. Seen failing with the
// thinking switch of params removed, and with New not raising max_tokens.
func TestThinkingIsRequestedWhenAsked(t *testing.T) {
	for _, c := range []struct {
		opts           anthropic.Options
		thinking, conf string
		minMax         float64
	}{
		{anthropic.Options{Effort: "high"}, `{"type":"adaptive"}`, `{"effort":"high"}`, 1},
		{anthropic.Options{ThinkingBudget: 8000}, `{"budget_tokens":8000,"type":"enabled"}`, `null`, 8001},
		{anthropic.Options{}, `null`, `null`, 1},
	} {
		url, bodies := capture(t)
		c.opts.APIKey, c.opts.BaseURL, c.opts.Model, c.opts.MaxRetries = "sk", url, "claude-test", -1
		m, err := anthropic.New(c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Complete(context.Background(), contracts.ModelRequest{Messages: []contracts.Message{
			{Role: contracts.RoleUser, Content: []contracts.Block{{Type: contracts.BlockText, Text: "hi"}}}}}); err != nil {
			t.Fatal(err)
		}
		body := (*bodies)[0]
		if jsonOf(body["thinking"]) != c.thinking || jsonOf(body["output_config"]) != c.conf || body["max_tokens"].(float64) < c.minMax {
			t.Errorf("%+v: thinking %s, output_config %s, max_tokens %v; want %s, %s, at least %v", c.opts,
				jsonOf(body["thinking"]), jsonOf(body["output_config"]), body["max_tokens"], c.thinking, c.conf, c.minMax)
		}
	}
	for _, bad := range []anthropic.Options{{Effort: "huge"}, {ThinkingBudget: 100}} {
		bad.APIKey, bad.Model = "sk", "claude-test"
		var se *contracts.SettingError
		if _, err := anthropic.New(bad); !errors.As(err, &se) {
			t.Errorf("New(%+v) = %v, want a setting error", bad, err)
		}
	}
}

// Thinking another driver wrote (an OpenRouter detail list) is never sent
// to Anthropic; Anthropic's own is. Seen failing with the origin check of
// toMessage removed.
func TestOnlyOwnThinkingIsReplayed(t *testing.T) {
	url, bodies := capture(t)
	m, err := anthropic.New(anthropic.Options{APIKey: "sk", BaseURL: url, Model: "claude-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	req := contracts.ModelRequest{Messages: []contracts.Message{
		{Role: contracts.RoleUser, Content: []contracts.Block{{Type: contracts.BlockText, Text: "hi"}}},
		{Role: contracts.RoleAssistant, Content: []contracts.Block{
			{Type: contracts.BlockThinking, Text: "theirs", Signature: `[{"type":"reasoning.text"}]`, Origin: "openaicompat"},
			{Type: contracts.BlockThinking, Text: "ours", Signature: "SIG", Origin: anthropic.Origin},
			{Type: contracts.BlockText, Text: "hello"}}},
		{Role: contracts.RoleUser, Content: []contracts.Block{{Type: contracts.BlockText, Text: "again"}}},
	}}
	if _, err := m.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	assistant := (*bodies)[0]["messages"].([]any)[1].(map[string]any)
	content := assistant["content"].([]any)
	if len(content) != 2 || content[0].(map[string]any)["thinking"] != "ours" {
		t.Fatalf("replayed assistant content = %s, want our thinking and the text only", jsonOf(content))
	}
}
