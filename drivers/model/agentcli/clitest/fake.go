package clitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"

	"github.com/sms-baseline/sms/contracts"
)

// TB is the part of testing.TB the fakes use.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Fake is a provider's HTTP API replaying scripted turns to a CLI.
type Fake struct {
	// URL is the server's base URL.
	URL string

	t     TB
	mu    sync.Mutex
	turns [][]contracts.Block
	next  int
	ids   int
	seen  []json.RawMessage
	down  int // status to answer every request with, when non-zero
	check func(*http.Request) int
}

func newFake(t TB, turns [][]contracts.Block) *Fake {
	return &Fake{t: t, turns: turns}
}

func (f *Fake) serve(h http.Handler) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		down, check := f.down, f.check
		f.mu.Unlock()
		if check != nil && down == 0 {
			down = check(r)
		}
		if down != 0 {
			http.Error(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, down)
			return
		}
		h.ServeHTTP(w, r)
	}))
	f.t.Cleanup(srv.Close)
	f.URL = srv.URL
}

// Refuse makes the fake answer every request with status, as a provider
// does to a missing or wrong login.
func (f *Fake) Refuse(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = status
}

// Check makes the fake ask check about every request first: a non-zero
// status refuses it with that status, as a provider refuses a login.
func (f *Fake) Check(check func(*http.Request) int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.check = check
}

// Requests returns the bodies of the agent loop's requests so far.
func (f *Fake) Requests() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]json.RawMessage(nil), f.seen...)
}

// read decodes r's body into v, answering 400 when it cannot.
func (f *Fake) read(w http.ResponseWriter, r *http.Request, v any) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		http.Error(w, fmt.Sprintf(`{"error":{"message":%q}}`, err.Error()), http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

func (f *Fake) record(body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, body)
}

// nextTurn returns the next scripted turn; past the script, an error text.
func (f *Fake) nextTurn() []contracts.Block {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next >= len(f.turns) {
		f.t.Errorf("the CLI asked for turn %d; the script has %d", f.next+1, len(f.turns))
		return []contracts.Block{{Type: contracts.BlockText, Text: "the script has no more turns"}}
	}
	f.next++
	return f.turns[f.next-1]
}

func (f *Fake) toolID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids++
	return fmt.Sprintf("call_fake_%d", f.ids)
}

// CLI returns the path of the agent CLI the variable env names (set by
// hack/agent-clis.sh). Without it the test is skipped, unless
// SMS_REQUIRE_AGENT_CLIS=1 (as make test sets), which fails it.
func CLI(t TB, env string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		if os.Getenv("SMS_REQUIRE_AGENT_CLIS") == "1" {
			t.Fatalf("%s is not set: run eval \"$(hack/agent-clis.sh)\"", env)
		}
		t.Skipf("%s is not set (eval \"$(hack/agent-clis.sh)\" installs the CLIs)", env)
	}
	return path
}
