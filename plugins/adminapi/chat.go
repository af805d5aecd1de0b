package adminapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/agentloop"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// agentTurn reads the request and the active agent. The session is kept
// per credential: the name of the caller's credential prefixes it, so one
// credential can never read or continue another's conversation.
func (a *admin) agentTurn(ctx context.Context, r *smshttp.Request) (agentloop.Service, adminv1.ChatRequest, error) {
	var body adminv1.ChatRequest
	raw := bodyJSON(r)
	if raw != nil {
		if err := json.Unmarshal(raw, &body); err != nil {
			return nil, body, smshttp.NewError(smshttp.KindValidation, `the body is {"session":"...","text":"..."}: `+err.Error())
		}
	}
	if body.Session == "" || body.Text == "" {
		return nil, body, smshttp.NewError(smshttp.KindValidation, `the body is {"session":"...","text":"..."}, both non-empty`)
	}
	if who := smshttp.PrincipalFrom(ctx); who.Authenticated {
		body.Session = who.Name + "/" + body.Session
	}
	svc, err := kernel.Lookup[agentloop.Service](a.ctx, agentloop.Key)
	if err != nil {
		return nil, body, smshttp.NewError(smshttp.KindNotFound,
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
	return answer(wireReply(reply)), nil
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
	return &smshttp.Response{Headers: versionHeaders(), Stream: func(w http.ResponseWriter) {
		defer release()
		sse := adminv1.StartSSE(w)
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
			if err := sse.Send("", wireChatEvent(ev)); err != nil {
				gone = true
				continue
			}
			sse.Flush()
		}
	}}, nil
}
