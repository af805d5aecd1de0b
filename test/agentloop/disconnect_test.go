package agentloop

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/scripted"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// gated answers its first call at once and holds the second until release.
type gated struct {
	inner   contracts.ModelService
	release chan struct{}
	mu      sync.Mutex
	calls   int
}

func (g *gated) Complete(ctx context.Context, req contracts.ModelRequest) (contracts.ModelResponse, error) {
	g.mu.Lock()
	g.calls++
	n := g.calls
	g.mu.Unlock()
	if n == 2 {
		select {
		case <-g.release:
		case <-ctx.Done():
			return contracts.ModelResponse{}, ctx.Err()
		}
	}
	return g.inner.Complete(ctx, req)
}

// A streamed turn keeps running when its client disconnects: the turn ends
// and is recorded. Seen failing with chatStream passing the request's
// context to the turn.
func TestTurnOutlivesDisconnectedClient(t *testing.T) {
	m := &gated{inner: scripted.New([][]contracts.Block{defineDoubler(), text("done")}), release: make(chan struct{})}
	env := baselinetest.New(t, baselinetest.Options{Model: m})
	srv := httptest.NewServer(env)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/chat/stream", strings.NewReader(`{"session":"s","text":"go"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = adminv1.ReadSSE(resp.Body, func(adminv1.SSEFrame) error { return io.EOF }) // until the first event
	cancel()                                                                       // the client goes away mid-turn
	_ = resp.Body.Close()
	close(m.release)
	for range 250 { // the turn finishes on its own; wait for its record
		events, err := env.Kernel.Events(context.Background(), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if e.Type == "chat/turn" && strings.Contains(string(e.Data), `"done"`) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the turn did not finish after its client disconnected")
}
