package openai

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/sms-baseline/sms/contracts"
)

// Options configures a Model.
type Options struct {
	// APIKey is the tenant's key; it is required.
	APIKey string
	// BaseURL overrides the provider's public endpoint (a proxy or a fake).
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
	// Effort is one of Efforts: how hard a reasoning model works. With
	// it, the model's reasoning summaries come back as thinking.
	Effort string
}

// Origin marks the thinking blocks this driver writes and replays.
const Origin = "openai"

// Efforts are the efforts the Responses API takes, in increasing order.
var Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// Model talks to the Responses API. It is safe for concurrent use.
type Model struct {
	client    openai.Client
	model     string
	maxTokens int64
	effort    string
}

var (
	_ contracts.ModelService  = (*Model)(nil)
	_ contracts.ModelStreamer = (*Model)(nil)
)

// New returns a Model for opts.
func New(opts Options) (*Model, error) {
	if opts.APIKey == "" || opts.Model == "" {
		return nil, errors.New("openai model: an API key and a model name are required")
	}
	ro := []option.RequestOption{option.WithAPIKey(opts.APIKey)}
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
	if opts.Effort != "" && !slices.Contains(Efforts, opts.Effort) {
		return nil, &contracts.SettingError{Setting: contracts.ModelEffort,
			Err: fmt.Errorf("openai takes %s, not %q", contracts.OrList(Efforts), opts.Effort)}
	}
	return &Model{client: openai.NewClient(ro...), model: opts.Model, maxTokens: int64(opts.MaxTokens), effort: opts.Effort}, nil
}

// Complete sends req and returns the assistant's turn.
func (m *Model) Complete(ctx context.Context, req contracts.ModelRequest) (contracts.ModelResponse, error) {
	params, err := m.params(req)
	if err != nil {
		return contracts.ModelResponse{}, err
	}
	resp, err := m.client.Responses.New(ctx, params)
	if err != nil {
		return contracts.ModelResponse{}, wrapErr(ctx, err)
	}
	return fromRaw(resp.RawJSON())
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
		stream := m.client.Responses.NewStreaming(ctx, params)
		defer func() { _ = stream.Close() }()
		final, thought := "", false
		for stream.Next() {
			ev := stream.Current()
			switch ev.Type {
			case "response.output_text.delta":
				if ev.Delta != "" && !yield(contracts.StreamEvent{Type: contracts.EventTextDelta, Text: ev.Delta}, nil) {
					return
				}
			case "response.reasoning_summary_text.delta":
				thought = true
				if ev.Delta != "" && !yield(contracts.StreamEvent{Type: contracts.EventThinkingDelta, Text: ev.Delta}, nil) {
					return
				}
			case "response.completed", "response.incomplete", "response.failed":
				final = ev.Response.RawJSON()
			case "error":
				yield(contracts.StreamEvent{}, fmt.Errorf("openai model: %s: %s", ev.Code, ev.Message))
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(contracts.StreamEvent{}, wrapErr(ctx, err))
			return
		}
		if final == "" {
			yield(contracts.StreamEvent{}, errors.New("openai model: the stream ended without a response"))
			return
		}
		resp, err := fromRaw(final)
		if err != nil {
			yield(contracts.StreamEvent{}, err)
			return
		}
		for _, ev := range contracts.ResponseEvents(resp) {
			streamed := ev.Type == contracts.EventTextDelta || (thought && ev.Type == contracts.EventThinkingDelta)
			if !streamed && !yield(ev, nil) {
				return
			}
		}
	}
}

// wrapErr keeps the client's error in the chain and adds ctx's error when
// ctx ended the call, so errors.Is finds either.
func wrapErr(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("openai model: %w (%w)", ctxErr, err)
	}
	return fmt.Errorf("openai model: %w", err)
}

// params builds the request body for req.
func (m *Model) params(req contracts.ModelRequest) (responses.ResponseNewParams, error) {
	p := responses.ResponseNewParams{Model: m.model, Store: openai.Bool(false),
		// Nothing is stored, so reasoning comes back encrypted to be replayed.
		Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}}
	if m.maxTokens > 0 {
		p.MaxOutputTokens = openai.Int(m.maxTokens)
	}
	if m.effort != "" {
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(m.effort), Summary: shared.ReasoningSummaryAuto}
	}
	if req.System != "" {
		p.Instructions = openai.String(req.System)
	}
	for i, msg := range req.Messages {
		items, err := toItems(msg)
		if err != nil {
			return p, fmt.Errorf("openai model: message %d: %w", i+1, err)
		}
		p.Input.OfInputItemList = append(p.Input.OfInputItemList, items...)
	}
	for _, t := range req.Tools {
		tool, err := toTool(t)
		if err != nil {
			return p, fmt.Errorf("openai model: tool %s: %w", t.Name, err)
		}
		p.Tools = append(p.Tools, tool)
	}
	return p, nil
}
