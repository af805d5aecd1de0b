package adminv1

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultTimeout bounds each request of a Client created with a nil
// *http.Client.
const DefaultTimeout = 30 * time.Second

// MaxAnswerBytes bounds every answer body the client reads.
const MaxAnswerBytes = 8 << 20

// maxMessageBytes bounds the message of an *Error built from an answer
// that is not the kernel's JSON error (a proxy's HTML page, say).
const maxMessageBytes = 1024

// Client calls one kernel's admin API. Create it with New; it is safe for
// concurrent use.
type Client struct {
	base  string
	token string
	hc    *http.Client
	csrf  atomic.Bool // signed in with Login: every request carries CSRFHeader
	// prefix is the kernel's admin prefix (WithPrefix); "" is DefaultPrefix.
	prefix string
}

// New returns a client for the kernel at baseURL (for example
// "http://acme-kernel.tenants.svc:8787"). A non-empty token is sent as
// "Authorization: Bearer <token>". A nil hc means a client with
// DefaultTimeout. A malformed baseURL is reported by the first call.
func New(baseURL, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: hc}
}

// Error is a non-2xx answer of the kernel. Kind and Message come from the
// kernel's {"error":{"message","kind"}}; when the answer is not that JSON,
// Kind is empty and Message is the start of the body (or the status text).
type Error struct {
	Method  string
	Path    string
	Status  int
	Kind    string
	Message string
}

// Error names the request, the status and the kernel's message.
func (e *Error) Error() string {
	return fmt.Sprintf("kernel admin api: %s %s: %d %s: %s",
		e.Method, e.Path, e.Status, http.StatusText(e.Status), e.Message)
}

// IsNotFound reports whether err is an *Error with status 404: an unknown
// plugin or approval, or an approval that was already decided.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict reports whether err is an *Error with status 409, for example
// an approval decided with a code hash other than the one it is bound to.
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

// IsForbidden reports whether err is the kernel's 403: the credential or
// the decider may not do this (an approval the kernel does not count).
func IsForbidden(err error) bool { return hasStatus(err, http.StatusForbidden) }

// IsRefused reports whether err is an *Error the same request would get
// again: a 4xx other than 401 (a credential that may be rotated), 408, 425
// and 429 (come back later). Such a request is not worth retrying until it
// changes.
func IsRefused(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 {
		return false
	}
	switch e.Status {
	case http.StatusUnauthorized, http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return true
}

func hasStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}

// call is one request: path is already escaped; body, when not nil, is
// sent as JSON; header adds to the defaults.
type call struct {
	method string
	path   string
	query  url.Values
	body   any
	header http.Header
}

// wrap names the request and the step that failed.
func (rq call) wrap(step string, err error) error {
	return fmt.Errorf("kernel admin api: %s %s: %s: %w", rq.method, rq.path, step, err)
}

// do sends rq and decodes a 2xx JSON answer into out (nil: the answer is
// discarded). Any other status is an *Error.
func (c *Client) do(ctx context.Context, rq call, out any) error {
	raw, err := c.send(ctx, rq)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return rq.wrap("decode answer", err)
	}
	return nil
}

// send performs rq and returns the body of a 2xx answer.
func (c *Client) send(ctx context.Context, rq call) ([]byte, error) {
	req, err := c.request(ctx, rq)
	if err != nil {
		return nil, rq.wrap("build request", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, rq.wrap("send", err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return nil, rq.wrap("read answer", err)
	}
	if len(raw) > MaxAnswerBytes {
		return nil, rq.wrap("read answer", fmt.Errorf("the answer exceeds %d bytes", MaxAnswerBytes))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, answerError(rq, resp.StatusCode, raw)
	}
	if err := checkVersion(rq, resp); err != nil {
		return nil, err
	}
	return raw, nil
}

// request builds the *http.Request of rq.
func (c *Client) request(ctx context.Context, rq call) (*http.Request, error) {
	target := c.base + Prefixed(rq.path, c.prefix)
	if len(rq.query) > 0 {
		target += "?" + rq.query.Encode()
	}
	var body io.Reader
	if rq.body != nil {
		raw, err := json.Marshal(rq.body)
		if err != nil {
			return nil, fmt.Errorf("encode body: %w", err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, target, body)
	if err != nil {
		return nil, err
	}
	for k, v := range rq.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.csrf.Load() {
		req.Header.Set(CSRFHeader, "1")
	}
	return req, nil
}

// answerError builds the *Error of a non-2xx answer.
func answerError(rq call, status int, raw []byte) *Error {
	e := &Error{Method: rq.method, Path: rq.path, Status: status}
	var env ErrorAnswer
	if json.Unmarshal(raw, &env) == nil && env.Error.Message != "" {
		e.Kind, e.Message = env.Error.Kind, env.Error.Message
		return e
	}
	text := strings.TrimSpace(string(raw))
	switch {
	case text == "":
		text = http.StatusText(status)
	case len(text) > maxMessageBytes:
		text = fmt.Sprintf("%s... (%d more bytes)", strings.ToValidUTF8(text[:maxMessageBytes], ""), len(text)-maxMessageBytes)
	}
	e.Message = text
	return e
}

// ErrVersion is the error of an answer from a kernel that speaks another
// version of the admin API than this package: a kernel image built on
// another release of sms.
var ErrVersion = errors.New("admin API version mismatch")

// checkVersion refuses a 2xx answer whose VersionHeader names another
// version than this package speaks. A kernel that names none is taken as
// speaking Version.
func checkVersion(rq call, resp *http.Response) error {
	if v := resp.Header.Get(VersionHeader); v != "" && v != Version {
		return rq.wrap("check version", fmt.Errorf("%w: the kernel speaks admin API %s, this client %s", ErrVersion, v, Version))
	}
	return nil
}
