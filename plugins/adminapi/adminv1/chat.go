package adminv1

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// ChatStream runs one turn of session with the user's text through POST
// /api/chat/stream and calls fn with each event as it arrives (text_delta,
// thinking_delta, tool_call, tool_result, verdict, then done or error). An error event
// ends the turn and is returned as an error; so is an error from fn. The
// client's timeout applies to the whole turn: pass New an http.Client
// without one for long turns.
func (c *Client) ChatStream(ctx context.Context, session, text string, fn func(ChatEvent) error) error {
	rq := call{method: http.MethodPost, path: RouteChatStream, body: ChatRequest{Session: session, Text: text}}
	req, err := c.request(ctx, rq)
	if err != nil {
		return rq.wrap("build request", err)
	}
	req.Header.Set("Accept", EventStreamType)
	resp, err := c.hc.Do(req)
	if err != nil {
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
	return ReadSSE(resp.Body, func(f SSEFrame) error {
		var ev ChatEvent
		if err := json.Unmarshal(f.Data, &ev); err != nil {
			return rq.wrap("decode event", err)
		}
		if err := fn(ev); err != nil {
			return err
		}
		if ev.Type == ChatError {
			return fmt.Errorf("kernel admin api: chat: %s", ev.Error)
		}
		return nil
	})
}
