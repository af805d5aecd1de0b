package adminv1

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/sms-baseline/sms/plugins/agentloop"
)

// maxFrameBytes bounds one server-sent event of a chat stream.
const maxFrameBytes = 4 << 20

// ChatStream runs one turn of session with the user's text through POST
// /api/chat/stream and calls fn with each event as it arrives (text_delta,
// tool_call, tool_result, verdict, then done or error). An error event
// ends the turn and is returned as an error; so is an error from fn. The
// client's timeout applies to the whole turn: pass New an http.Client
// without one for long turns.
func (c *Client) ChatStream(ctx context.Context, session, text string, fn func(agentloop.Event) error) error {
	rq := call{method: http.MethodPost, path: "/api/chat/stream",
		body: map[string]string{"session": session, "text": text}}
	req, err := c.request(ctx, rq)
	if err != nil {
		return rq.wrap("build request", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		return rq.wrap("send", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
		return answerError(rq, resp.StatusCode, raw)
	}
	return readFrames(resp.Body, func(data []byte) error {
		var ev agentloop.Event
		if err := json.Unmarshal(data, &ev); err != nil {
			return rq.wrap("decode event", err)
		}
		if err := fn(ev); err != nil {
			return err
		}
		if ev.Type == "error" {
			return fmt.Errorf("kernel admin api: chat: %s", ev.Error)
		}
		return nil
	})
}

// readFrames calls fn with the data of each server-sent event in r.
func readFrames(r io.Reader, fn func([]byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxFrameBytes)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if len(data) > 0 {
				if err := fn(data); err != nil {
					return err
				}
			}
			data = data[:0]
			continue
		}
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(rest, []byte(" "))...)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("kernel admin api: read stream: %w", err)
	}
	if len(data) > 0 {
		return fn(data)
	}
	return nil
}
