package adminapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi"
	"github.com/sms-baseline/sms/plugins/agentloop"
)

// heldAgent's streamed turns send one text event, then wait until release
// is closed before they end.
type heldAgent struct{ release chan struct{} }

func (a heldAgent) Chat(context.Context, string, string) (agentloop.Reply, error) {
	return agentloop.Reply{Reply: "ok"}, nil
}

func (a heldAgent) ChatStream(context.Context, string, string) iter.Seq2[agentloop.Event, error] {
	return func(yield func(agentloop.Event, error) bool) {
		if !yield(agentloop.Event{Type: agentloop.EventTextDelta}, nil) {
			return
		}
		<-a.release
		yield(agentloop.Event{Type: agentloop.EventDone}, nil)
	}
}

// openChat opens POST /api/chat/stream with tok; the stream ends with the
// test.
func openChat(t *testing.T, srv *httptest.Server, tok string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/chat/stream", strings.NewReader(`{"session":"s","text":"hi"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// wantTooMany checks that resp is a 429 of kind too_many naming limit.
func wantTooMany(t *testing.T, what string, resp *http.Response, limit string) {
	t.Helper()
	if resp.StatusCode != 429 {
		t.Fatalf("%s = %d, want 429 too_many naming %q", what, resp.StatusCode, limit)
	}
	raw, _ := io.ReadAll(resp.Body)
	var body struct {
		Error struct{ Message, Kind string }
	}
	if json.Unmarshal(raw, &body) != nil || body.Error.Kind != "too_many" || !strings.Contains(body.Error.Message, limit) {
		t.Fatalf("%s = %d %s, want 429 too_many naming %q", what, resp.StatusCode, raw, limit)
	}
}

// Chat streams take their place among the streams a credential and the
// kernel hold, with event streams: past either cap a chat stream (or an
// event stream) is a 429 of kind too_many naming the limit, and a finished
// turn frees its place.
// Seen failing without the fix (no acquire in chatStream): a second chat
// stream of the credential already holding one was served with a 200.
func TestChatStreamLimits(t *testing.T) {
	agent := heldAgent{release: make(chan struct{})}
	_, srv := streamKernel(t, kernel.NewMemoryLog(), adminapi.Options{MaxStreamsPerCredential: 1, MaxStreams: 2}, agentProvider(agent))
	release := sync.OnceFunc(func() { close(agent.release) })
	t.Cleanup(release) // before the server closes: it waits for the held turn
	held := openChat(t, srv, "one")
	sc := bufio.NewScanner(held.Body)
	if held.StatusCode != 200 || !sc.Scan() || !strings.Contains(sc.Text(), agentloop.EventTextDelta) {
		t.Fatalf("first chat stream = %d %q", held.StatusCode, sc.Text())
	}
	perCredential := "credential one already holds 1 streams (event and chat streams together), the limit per credential"
	wantTooMany(t, "a second chat stream of one", openChat(t, srv, "one"), perCredential)
	events, _ := openStream(t, srv, "one", "")
	wantTooMany(t, "an event stream of one", events, perCredential)
	if events, _ := openStream(t, srv, "two", ""); events.StatusCode != 200 {
		t.Fatalf("an event stream of two = %d, want 200", events.StatusCode)
	}
	wantTooMany(t, "a chat stream of two", openChat(t, srv, "two"), "the kernel already serves 2 streams")
	release()
	if rest, _ := io.ReadAll(held.Body); !strings.Contains(string(rest), agentloop.EventDone) {
		t.Fatalf("the held turn ended with %q, want done", rest)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp := openChat(t, srv, "one")
		if resp.StatusCode == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a finished chat stream never freed its place: %d", resp.StatusCode)
		}
	}
}
