package adminapi_test

import (
	"context"
	"iter"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/agentloop"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// fakeAgent records the sessions and callers of the turns it is asked for.
type fakeAgent struct {
	mu    sync.Mutex
	turns []string // session + " by " + caller
}

func (a *fakeAgent) note(ctx context.Context, session string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.turns = append(a.turns, session+" by "+smshttp.PrincipalFrom(ctx).Name)
}

func (a *fakeAgent) Chat(ctx context.Context, session, _ string) (agentloop.Reply, error) {
	a.note(ctx, session)
	return agentloop.Reply{Reply: "ok"}, nil
}

func (a *fakeAgent) ChatStream(ctx context.Context, session, _ string) iter.Seq2[agentloop.Event, error] {
	a.note(ctx, session)
	return func(yield func(agentloop.Event, error) bool) { yield(agentloop.Event{Type: agentloop.EventDone}, nil) }
}

// agentProvider is a system plugin that provides svc as the chat agent.
func agentProvider(svc agentloop.Service) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: "test.agent", Version: "1", Provide: []string{agentloop.Key}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			if err := c.Kernel().DefineKey(agentloop.Key, kernel.KeyMeta{MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem}); err != nil {
				return err
			}
			return c.Provide(agentloop.Key, svc)
		},
	}
}

// Chat sessions belong to the credential that holds them: the same session
// name from two credentials is two conversations, so one caller never
// reads or continues another's. Both routes hand the agent the caller.
// Seen failing ("ops by admin" and "ops by only-chat" shared one session)
// without the credential prefix in agentTurn, and (an anonymous stream
// turn) with chatStream using the connection's context.
func TestChatSessionsBelongToTheirCredential(t *testing.T) {
	agent := &fakeAgent{}
	f := scoped(t, agentProvider(agent))
	body := map[string]string{"session": "ops", "text": "hi"}
	for _, c := range []struct{ path, tok string }{{"/api/chat", token}, {"/api/chat", "chat-token"}, {"/api/chat/stream", "chat-token"}} {
		if got := f.status(t, request{http.MethodPost, c.path, c.tok, body}); got != 200 {
			t.Fatalf("POST %s with %s = %d", c.path, c.tok, got)
		}
	}
	want := []string{"admin/ops by admin", "only-chat/ops by only-chat", "only-chat/ops by only-chat"}
	if strings.Join(agent.turns, ",") != strings.Join(want, ",") {
		t.Fatalf("turns = %q, want %q", agent.turns, want)
	}
}
