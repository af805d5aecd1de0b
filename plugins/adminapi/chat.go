package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/agentloop"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// chatRequest is the body of POST /api/chat and /api/chat/stream.
type chatRequest struct {
	Session string `json:"session"`
	Text    string `json:"text"`
}

// agentTurn reads the request and the active agent. The session is kept
// per credential: the name of the caller's credential prefixes it, so one
// credential can never read or continue another's conversation.
func (a *admin) agentTurn(ctx context.Context, r *smshttp.Request) (agentloop.Service, chatRequest, error) {
	var body chatRequest
	raw := bodyJSON(r)
	if raw != nil {
		if err := json.Unmarshal(raw, &body); err != nil {
			return nil, body, smshttp.Errorf(smshttp.KindValidation, `the body is {"session":"...","text":"..."}: `+err.Error())
		}
	}
	if body.Session == "" || body.Text == "" {
		return nil, body, smshttp.Errorf(smshttp.KindValidation, `the body is {"session":"...","text":"..."}, both non-empty`)
	}
	if who := smshttp.PrincipalFrom(ctx); who.Authenticated {
		body.Session = who.Name + "/" + body.Session
	}
	svc, err := kernel.Lookup[agentloop.Service](a.ctx, agentloop.Key)
	if err != nil {
		return nil, body, smshttp.Errorf(smshttp.KindNotFound,
			"no chat agent is active: the kernel runs without a model, or the agent plugin is disabled")
	}
	return svc, body, nil
}

// chat is POST /api/chat: one turn, answered with {reply, steps}.
func (a *admin) chat(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	svc, body, err := a.agentTurn(ctx, r)
	if err != nil {
		return nil, err
	}
	// The turn finishes even if the client goes away: it may be changing
	// the application, and the next turn on the session waits for it.
	reply, err := svc.Chat(context.WithoutCancel(ctx), body.Session, body.Text)
	if err != nil {
		return nil, err
	}
	return smshttp.JSON(reply), nil
}

// chatStream is POST /api/chat/stream: one turn as server-sent events, a
// "data:" frame per event, ending with done or error. The stream counts
// against the caller's and the kernel's stream limits until the turn ends
// (it holds its connection that long, past the write timeout).
func (a *admin) chatStream(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	svc, body, err := a.agentTurn(ctx, r)
	if err != nil {
		return nil, err
	}
	release, err := a.streams.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &smshttp.Response{Stream: func(w http.ResponseWriter) {
		defer release()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		gone := false // the client went away: the turn still runs to its end
		// ctx carries the caller (for the caller key), not the connection:
		// the turn runs to its end when the client goes away.
		for ev, err := range svc.ChatStream(context.WithoutCancel(ctx), body.Session, body.Text) {
			if gone {
				continue
			}
			if err != nil && ev.Type != agentloop.EventError {
				ev = agentloop.Event{Type: agentloop.EventError, Error: err.Error()}
			}
			raw, _ := json.Marshal(ev) // an Event always encodes
			if _, err := fmt.Fprintf(w, "data: %s\n\n", raw); err != nil {
				gone = true
				continue
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
	}}, nil
}
