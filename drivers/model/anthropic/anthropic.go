package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/sms-baseline/sms/contracts"
)

// DefaultMaxTokens is the output limit used when Options.MaxTokens is zero.
const DefaultMaxTokens = 4096

// Options configures a Model.
type Options struct {
	// APIKey is the tenant's key; it is required.
	APIKey string
	// BaseURL overrides the provider's public endpoint (a proxy or a fake).
	BaseURL string
	// Model is the model name; it is required.
	Model string
	// MaxTokens caps the output; zero means DefaultMaxTokens.
	MaxTokens int
	// HTTPClient replaces the default HTTP client.
	HTTPClient *http.Client
	// MaxRetries is how often a rate limit or server error is retried; zero
	// keeps the client's default (2) and a negative value disables retries.
	MaxRetries int
	// Effort is one of Efforts: how hard the model works. With it and no
	// ThinkingBudget, the model thinks adaptively.
	Effort string
	// ThinkingBudget, at least MinThinkingBudget, turns extended thinking
	// on with that many tokens; MaxTokens is raised above it when needed.
	ThinkingBudget int
}

// Origin marks the thinking blocks this driver writes and replays.
const Origin = "anthropic"

// Efforts are the efforts the Messages API takes, in increasing order.
var Efforts = []string{"low", "medium", "high", "xhigh", "max"}

// MinThinkingBudget is the smallest thinking budget the API takes.
const MinThinkingBudget = 1024

// Model talks to the Messages API. It is safe for concurrent use.
type Model struct {
	client    sdk.Client
	model     string
	maxTokens int64
	effort    string
	budget    int64
}

var (
	_ contracts.ModelService  = (*Model)(nil)
	_ contracts.ModelStreamer = (*Model)(nil)
)

// New returns a Model for opts.
func New(opts Options) (*Model, error) {
	if opts.APIKey == "" {
		return nil, errors.New("anthropic model: an API key is required")
	}
	if opts.Model == "" {
		return nil, errors.New("anthropic model: a model name is required")
	}
	ro := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithAPIKey(opts.APIKey)}
	if opts.BaseURL != "" {
		ro = append(ro, option.WithBaseURL(opts.BaseURL))
	} else {
		ro = append(ro, option.WithEnvironmentProduction())
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	switch {
	case opts.MaxRetries < 0:
		ro = append(ro, option.WithMaxRetries(0))
	case opts.MaxRetries > 0:
		ro = append(ro, option.WithMaxRetries(opts.MaxRetries))
	}
	maxTokens := int64(opts.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	if err := checkReasoning(opts); err != nil {
		return nil, err
	}
	budget := int64(opts.ThinkingBudget)
	if budget > 0 && maxTokens <= budget {
		maxTokens = budget + DefaultMaxTokens // the answer's room comes on top of the thinking's
	}
	return &Model{client: sdk.NewClient(ro...), model: opts.Model, maxTokens: maxTokens, effort: opts.Effort, budget: budget}, nil
}

// checkReasoning refuses an effort or a budget the API does not take.
func checkReasoning(opts Options) error {
	if opts.Effort != "" && !slices.Contains(Efforts, opts.Effort) {
		return &contracts.SettingError{Setting: contracts.ModelEffort,
			Err: fmt.Errorf("anthropic takes %s, not %q", contracts.OrList(Efforts), opts.Effort)}
	}
	if opts.ThinkingBudget != 0 && opts.ThinkingBudget < MinThinkingBudget {
		return &contracts.SettingError{Setting: contracts.ModelThinkingBudget,
			Err: fmt.Errorf("anthropic takes at least %d tokens, not %d", MinThinkingBudget, opts.ThinkingBudget)}
	}
	return nil
}

// Complete sends req and returns the assistant's turn.
func (m *Model) Complete(ctx context.Context, req contracts.ModelRequest) (contracts.ModelResponse, error) {
	params, err := m.params(req)
	if err != nil {
		return contracts.ModelResponse{}, err
	}
	msg, err := m.client.Messages.New(ctx, params)
	if err != nil {
		return contracts.ModelResponse{}, wrapErr(ctx, err)
	}
	if err := bodyError(msg.RawJSON()); err != nil {
		return contracts.ModelResponse{}, err
	}
	return fromMessage(msg)
}

// Stream sends req and yields its deltas, each tool call once it is whole,
// and finally done with the whole response.
func (m *Model) Stream(ctx context.Context, req contracts.ModelRequest) iter.Seq2[contracts.StreamEvent, error] {
	return func(yield func(contracts.StreamEvent, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(contracts.StreamEvent{}, err)
			return
		}
		stream := m.client.Messages.NewStreaming(ctx, params)
		defer func() { _ = stream.Close() }()
		var acc sdk.Message
		for stream.Next() {
			ev := stream.Current()
			if err := acc.Accumulate(ev); err != nil {
				yield(contracts.StreamEvent{}, fmt.Errorf("anthropic model: stream: %w", err))
				return
			}
			out, ok, err := streamEvent(ev, &acc)
			if err != nil {
				yield(contracts.StreamEvent{}, err)
				return
			}
			if ok && !yield(out, nil) {
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(contracts.StreamEvent{}, wrapErr(ctx, err))
			return
		}
		if acc.Type == "" {
			yield(contracts.StreamEvent{}, errors.New("anthropic model: the stream ended without a message"))
			return
		}
		resp, err := fromMessage(&acc)
		if err != nil {
			yield(contracts.StreamEvent{}, err)
			return
		}
		yield(contracts.StreamEvent{Type: contracts.EventDone, Response: &resp}, nil)
	}
}

// streamEvent maps one SSE event to the event to yield, if any.
func streamEvent(ev sdk.MessageStreamEventUnion, acc *sdk.Message) (contracts.StreamEvent, bool, error) {
	switch ev.Type {
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			return contracts.StreamEvent{Type: contracts.EventTextDelta, Text: ev.Delta.Text}, ev.Delta.Text != "", nil
		case "thinking_delta":
			return contracts.StreamEvent{Type: contracts.EventThinkingDelta, Text: ev.Delta.Thinking}, ev.Delta.Thinking != "", nil
		}
	case "content_block_stop":
		if ev.Index < 0 || int(ev.Index) >= len(acc.Content) {
			return contracts.StreamEvent{}, false, fmt.Errorf("anthropic model: stream: stop of unknown block %d", ev.Index)
		}
		if cb := acc.Content[ev.Index]; cb.Type == contracts.BlockToolUse {
			b := toolUseBlock(cb)
			return contracts.StreamEvent{Type: contracts.EventToolUse, Block: &b}, true, nil
		}
	}
	return contracts.StreamEvent{}, false, nil
}

// wrapErr keeps the client's error in the chain, and adds ctx's error when
// ctx ended the call and the client's error does not already wrap it, so
// errors.Is finds either.
func wrapErr(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("anthropic model: %w (%w)", ctxErr, err)
	}
	return fmt.Errorf("anthropic model: %w", err)
}

// bodyError reports an error object delivered with a success status, so
// such a call fails instead of returning an empty response.
func bodyError(raw string) error {
	var body struct {
		Type  string `json:"type"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if raw == "" {
		return errors.New("anthropic model: empty response body")
	}
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		return fmt.Errorf("anthropic model: response body: %w", err)
	}
	if body.Type == "error" || body.Error != nil {
		if body.Error == nil {
			return errors.New("anthropic model: the response is an error")
		}
		return fmt.Errorf("anthropic model: %s: %s", body.Error.Type, body.Error.Message)
	}
	if body.Type != "message" {
		return fmt.Errorf("anthropic model: unexpected response type %q", body.Type)
	}
	return nil
}
