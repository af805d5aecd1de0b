package openaicompat

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/sms-baseline/sms/contracts"
)

// Options configures a Model.
type Options struct {
	// APIKey is the key sent as a bearer token; it is required.
	APIKey string
	// BaseURL is the endpoint's base (ending before /chat/completions); it
	// is required.
	BaseURL string
	// Model is the model name; it is required.
	Model string
	// MaxTokens caps the output; zero leaves it to the server.
	MaxTokens int
	// HTTPClient replaces the default HTTP client.
	HTTPClient *http.Client
	// MaxRetries is how often a rate limit or server error is retried; zero
	// keeps the client's default (2) and a negative value disables retries.
	MaxRetries int
	// Effort is one of Efforts, sent as OpenRouter's unified reasoning
	// effort; ThinkingBudget is sent as its reasoning token budget. At
	// most one of them.
	Effort         string
	ThinkingBudget int
	// AppName and SiteURL attribute the traffic to the application
	// (OpenRouter's X-Title and HTTP-Referer headers); empty sends none.
	AppName string
	SiteURL string
}

// Model talks to a Chat Completions endpoint. It is safe for concurrent use.
type Model struct {
	client    openai.Client
	model     string
	maxTokens int64
	effort    string
	budget    int
}

var (
	_ contracts.ModelService  = (*Model)(nil)
	_ contracts.ModelStreamer = (*Model)(nil)
)

// New returns a Model for opts.
func New(opts Options) (*Model, error) {
	if opts.APIKey == "" || opts.BaseURL == "" || opts.Model == "" {
		return nil, errors.New("openaicompat model: an API key, a base URL and a model name are required")
	}
	if err := checkReasoning(opts); err != nil {
		return nil, err
	}
	ro := []option.RequestOption{option.WithAPIKey(opts.APIKey), option.WithBaseURL(opts.BaseURL)}
	if opts.AppName != "" {
		ro = append(ro, option.WithHeader("X-Title", opts.AppName))
	}
	if opts.SiteURL != "" {
		ro = append(ro, option.WithHeader("HTTP-Referer", opts.SiteURL))
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
	return &Model{client: openai.NewClient(ro...), model: opts.Model, maxTokens: int64(opts.MaxTokens),
		effort: opts.Effort, budget: opts.ThinkingBudget}, nil
}

// checkReasoning refuses an unknown effort, and an effort with a budget.
func checkReasoning(opts Options) error {
	switch {
	case opts.Effort != "" && !slices.Contains(Efforts, opts.Effort):
		return &contracts.SettingError{Setting: contracts.ModelEffort,
			Err: fmt.Errorf("openaicompat takes %s, not %q", contracts.OrList(Efforts), opts.Effort)}
	case opts.Effort != "" && opts.ThinkingBudget > 0:
		return &contracts.SettingError{Setting: contracts.ModelThinkingBudget,
			Err: errors.New("openaicompat takes an effort or a thinking budget, not both")}
	}
	return nil
}

// Complete sends req and returns the assistant's turn.
func (m *Model) Complete(ctx context.Context, req contracts.ModelRequest) (contracts.ModelResponse, error) {
	params, err := m.params(req)
	if err != nil {
		return contracts.ModelResponse{}, err
	}
	resp, err := m.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return contracts.ModelResponse{}, wrapErr(ctx, err)
	}
	if err := choiceError(resp.RawJSON()); err != nil {
		return contracts.ModelResponse{}, err
	}
	if len(resp.Choices) == 0 {
		return contracts.ModelResponse{}, bodyError(resp.RawJSON())
	}
	c := resp.Choices[0]
	r, err := messageReasoning(c.Message.RawJSON())
	if err != nil {
		return contracts.ModelResponse{}, err
	}
	var calls []call
	for _, tc := range c.Message.ToolCalls {
		calls = append(calls, call{id: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments})
	}
	return response(r, c.Message.Content, calls, c.FinishReason)
}

// Stream sends req and yields its text deltas, then each tool call whole,
// then done with the whole response.
func (m *Model) Stream(ctx context.Context, req contracts.ModelRequest) iter.Seq2[contracts.StreamEvent, error] {
	return func(yield func(contracts.StreamEvent, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(contracts.StreamEvent{}, err)
			return
		}
		stream := m.client.Chat.Completions.NewStreaming(ctx, params)
		defer func() { _ = stream.Close() }()
		var acc accumulator
		for stream.Next() {
			chunk := stream.Current()
			if err := choiceError(chunk.RawJSON()); err != nil {
				yield(contracts.StreamEvent{}, err)
				return
			}
			text, thinking := acc.add(chunk)
			if thinking != "" && !yield(contracts.StreamEvent{Type: contracts.EventThinkingDelta, Text: thinking}, nil) {
				return
			}
			if text != "" && !yield(contracts.StreamEvent{Type: contracts.EventTextDelta, Text: text}, nil) {
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(contracts.StreamEvent{}, wrapErr(ctx, err))
			return
		}
		resp, err := response(&acc.reasoning, acc.text.String(), acc.calls, acc.finish)
		if err != nil {
			yield(contracts.StreamEvent{}, err)
			return
		}
		for _, ev := range contracts.ResponseEvents(resp) {
			if ev.Type == contracts.EventTextDelta || ev.Type == contracts.EventThinkingDelta {
				continue // already streamed
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// wrapErr keeps the client's error in the chain and adds ctx's error when
// ctx ended the call, so errors.Is finds either.
func wrapErr(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("openaicompat model: %w (%w)", ctxErr, err)
	}
	return fmt.Errorf("openaicompat model: %w", err)
}
