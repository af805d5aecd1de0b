package adminv1

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// StreamIdle is how long Follow waits for any byte (an event or the
// kernel's keepalive, which Follow asks for three times per idle limit)
// before it gives up on a connection as hung.
const StreamIdle = 45 * time.Second

// FollowOptions say where Follow starts and when it gives up.
type FollowOptions struct {
	// After is the last sequence number already seen; 0 reads the log
	// from its start.
	After int64
	// Idle is how long a silent connection is trusted, from the request
	// on (a kernel that never answers is silent too); default StreamIdle.
	Idle time.Duration
	// Open, when set, is called once the kernel accepted the stream.
	Open func()
}

// Follow reads the kernel's event log as it grows, through GET
// /api/events/stream, calling fn with each event after opts.After, in
// order, until ctx ends, the connection fails or goes silent for
// opts.Idle, or fn returns an error; it returns why. The caller resumes
// by calling Follow again with the last Seq it saw. The client's timeout
// does not apply: the stream is bounded by ctx and the idle limit.
func (c *Client) Follow(ctx context.Context, opts FollowOptions, fn func(Event) error) error {
	after, idleFor := max(opts.After, 0), opts.Idle
	if idleFor <= 0 {
		idleFor = StreamIdle
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Ask for a sign of life three times per idle limit.
	every := max(int((idleFor / 3).Seconds()), 1)
	rq := call{method: http.MethodGet, path: RouteEventStream, query: url.Values{"keepalive": {strconv.Itoa(min(every, 60))}}}
	req, err := c.request(ctx, rq)
	if err != nil {
		return rq.wrap("build request", err)
	}
	req.Header.Set("Accept", EventStreamType)
	req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	hc := *c.hc
	hc.Timeout = 0
	idle := time.AfterFunc(idleFor, func() { cancel(errStreamIdle) })
	defer idle.Stop()
	resp, err := hc.Do(req)
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errStreamIdle) {
			err = cause
		}
		return rq.wrap("send", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
		return answerError(rq, resp.StatusCode, raw)
	}
	if err := checkVersion(rq, resp); err != nil {
		return err
	}
	if opts.Open != nil {
		opts.Open()
	}
	body := &touchReader{r: resp.Body, touch: func() { idle.Reset(idleFor) }}
	err = ReadSSE(body, func(f SSEFrame) error {
		var e Event
		if err := json.Unmarshal(f.Data, &e); err != nil {
			return rq.wrap("decode event", err)
		}
		return fn(e)
	})
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return rq.wrap("read", cause)
	}
	if err == nil {
		err = io.ErrUnexpectedEOF // the kernel closed a stream that has no end
	}
	return rq.wrap("read", err)
}

// errStreamIdle ends a stream that sent nothing for its idle limit.
var errStreamIdle = errors.New("no event or keepalive within the idle limit")

// touchReader calls touch whenever bytes arrive.
type touchReader struct {
	r     io.Reader
	touch func()
}

func (t *touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.touch()
	}
	return n, err
}
