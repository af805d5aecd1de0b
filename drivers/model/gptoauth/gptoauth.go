package gptoauth

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/openai"
)

// Endpoints and the client id codex itself uses; the backend is not a
// public API.
const (
	DefaultBaseURL = "https://chatgpt.com/backend-api/codex"
	DefaultAuthURL = "https://auth.openai.com/oauth/token"
	ClientID       = "app_EMoamEEZ73f0CkXaXp7hrann"
	// originator is the client name codex sends.
	originator = "codex_cli_rs"
)

// refreshMargin is how long before its expiry an access token is
// refreshed.
const refreshMargin = 5 * time.Minute

// ErrOfficialOnly is returned by New without Options.Unofficial.
var ErrOfficialOnly = errors.New("gpt-oauth model: this driver uses ChatGPT's undocumented Codex backend with codex login's tokens; " +
	"it is for one person's own kernel, never a service others use, and must be allowed explicitly (--allow-unofficial-gpt-oauth)")

// Options configures a Model.
type Options struct {
	// Unofficial must be true: the caller accepts that the backend is
	// undocumented, may change, and that the tokens are one person's.
	Unofficial bool
	// AuthFile is codex login's auth.json; empty means DefaultAuthFile.
	// Refreshed tokens are written back to it.
	AuthFile string
	// Model is the model name; it is required.
	Model string
	// Effort is one of openai.Efforts.
	Effort string
	// BaseURL and AuthURL replace the backend and the token endpoint (a
	// fake, in tests).
	BaseURL string
	AuthURL string
	// HTTPClient sends the requests; nil uses http.DefaultClient's
	// transport.
	HTTPClient *http.Client
}

// Model streams from the Codex backend in the Responses API's shape. It is
// safe for concurrent use.
type Model struct {
	inner *openai.Model
}

var (
	_ contracts.ModelService  = (*Model)(nil)
	_ contracts.ModelStreamer = (*Model)(nil)
)

// New loads the tokens and returns a Model, or ErrOfficialOnly.
func New(opts Options) (*Model, error) {
	if !opts.Unofficial {
		return nil, ErrOfficialOnly
	}
	if opts.AuthFile == "" {
		opts.AuthFile = DefaultAuthFile()
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	if opts.AuthURL == "" {
		opts.AuthURL = DefaultAuthURL
	}
	base := http.DefaultTransport
	if opts.HTTPClient != nil && opts.HTTPClient.Transport != nil {
		base = opts.HTTPClient.Transport
	}
	store := FileStore{Path: opts.AuthFile}
	tokens, err := store.Load()
	if err != nil {
		return nil, fmt.Errorf("gpt-oauth model: %w", err)
	}
	src := &source{tokens: tokens, store: store, authURL: opts.AuthURL, client: &http.Client{Transport: base}, margin: refreshMargin}
	inner, err := openai.New(openai.Options{APIKey: "set-per-request", BaseURL: opts.BaseURL, Model: opts.Model, Effort: opts.Effort,
		HTTPClient: &http.Client{Transport: &authorize{base: base, src: src}}})
	if err != nil {
		return nil, fmt.Errorf("gpt-oauth model: %w", err)
	}
	return &Model{inner: inner}, nil
}

// Complete streams req (the backend only streams) and returns the turn.
func (m *Model) Complete(ctx context.Context, req contracts.ModelRequest) (contracts.ModelResponse, error) {
	for ev, err := range m.inner.Stream(ctx, req) {
		if err != nil {
			return contracts.ModelResponse{}, fmt.Errorf("gpt-oauth model: %w", err)
		}
		if ev.Type == contracts.EventDone && ev.Response != nil {
			return *ev.Response, nil
		}
	}
	return contracts.ModelResponse{}, errors.New("gpt-oauth model: the stream ended without a response")
}

// Stream streams req.
func (m *Model) Stream(ctx context.Context, req contracts.ModelRequest) iter.Seq2[contracts.StreamEvent, error] {
	return m.inner.Stream(ctx, req)
}

// authorize sends each request with the current access token and codex's
// headers, and once more with a refreshed token when the backend answers
// 401.
type authorize struct {
	base http.RoundTripper
	src  *source
}

func (a *authorize) RoundTrip(req *http.Request) (*http.Response, error) {
	tokens, err := a.src.current(req.Context())
	if err != nil {
		return nil, err
	}
	resp, err := a.base.RoundTrip(withTokens(req, tokens))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || req.GetBody == nil {
		return resp, err
	}
	_ = resp.Body.Close()
	if err := a.src.refresh(req.Context(), tokens.AccessToken); err != nil {
		return nil, err
	}
	if tokens, err = a.src.current(req.Context()); err != nil {
		return nil, err
	}
	again := req.Clone(req.Context())
	if again.Body, err = req.GetBody(); err != nil {
		return nil, err
	}
	return a.base.RoundTrip(withTokens(again, tokens))
}

func withTokens(req *http.Request, t Tokens) *http.Request {
	out := req.Clone(req.Context())
	out.Header.Set("Authorization", "Bearer "+t.AccessToken)
	out.Header.Set("chatgpt-account-id", t.AccountID)
	out.Header.Set("originator", originator)
	out.Header.Set("OpenAI-Beta", "responses=experimental")
	return out
}
