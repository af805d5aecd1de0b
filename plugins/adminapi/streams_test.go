package adminapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gojaexec "github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// countingLog counts the reads of the event log.
type countingLog struct {
	kernel.EventLog
	reads atomic.Int64
}

func (l *countingLog) Read(ctx context.Context, after int64, limit int) ([]kernel.Event, error) {
	l.reads.Add(1)
	return l.EventLog.Read(ctx, after, limit)
}

// streamKernel serves the admin API with opts, and the extra plugins, over
// a kernel logging to log, with two read and chat credentials: tokens "one"
// and "two".
func streamKernel(t *testing.T, log kernel.EventLog, opts adminapi.Options, extra ...kernel.Plugin) (*kernel.Kernel, *httptest.Server) {
	t.Helper()
	exec := gojaexec.New(gojaexec.Options{})
	k := kernel.New(kernel.Options{Name: "test", Executor: exec, Log: log})
	scopes := []smshttp.Scope{smshttp.ScopeRead, smshttp.ScopeChat}
	creds := []smshttp.Credential{{Name: "one", Token: "one", Scopes: scopes}, {Name: "two", Token: "two", Scopes: scopes}}
	for _, p := range append([]kernel.Plugin{smshttp.Plugin(smshttp.Options{Credentials: creds}),
		judge.New(judge.Options{Executor: exec}).Plugin(), adminapi.Plugin(opts)}, extra...) {
		if err := k.Install(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Restore(context.Background()); err != nil {
		t.Fatalf("restore: %v", err)
	}
	h, _ := k.GetValue(smshttp.Key)
	srv := contractServer(t, h.(http.Handler))
	return k, srv
}

// openStream opens GET /api/events/stream with tok; the stream ends with
// the test or when cancel is called.
func openStream(t *testing.T, srv *httptest.Server, tok, query string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events/stream"+query, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp, cancel
}

// nextEvent reads frames until an event of type typ arrives.
func nextEvent(t *testing.T, frames <-chan adminv1.SSEFrame, typ string) {
	t.Helper()
	for f := range frames {
		var e kernel.Event
		if json.Unmarshal(f.Data, &e) == nil && e.Type == typ {
			return
		}
	}
	t.Fatalf("the stream ended before a %s event", typ)
}

// framesOf reads the frames of an event stream as they arrive, until it
// ends.
func framesOf(body io.Reader) <-chan adminv1.SSEFrame {
	out := make(chan adminv1.SSEFrame, 64)
	go func() {
		defer close(out)
		_ = adminv1.ReadSSE(body, func(f adminv1.SSEFrame) error {
			out <- adminv1.SSEFrame{ID: f.ID, Data: bytes.Clone(f.Data)}
			return nil
		})
	}()
	return out
}

// A quiet event stream does not read the log until the kernel appends an
// event, and then delivers it at once.
// Seen failing without the fix (pump polling the log every 200 ms): the
// quiet stream read the log 5 times in a second.
func TestEventStreamWaitsForAppends(t *testing.T) {
	log := &countingLog{EventLog: kernel.NewMemoryLog()}
	k, srv := streamKernel(t, log, adminapi.Options{})
	all, _ := k.Events(context.Background(), 0, 0)
	resp, _ := openStream(t, srv, "one", "?keepalive=60&after="+strconv.FormatInt(all[len(all)-1].Seq, 10))
	frames := framesOf(resp.Body)
	if err := k.Record(context.Background(), "test/first", "", nil); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, frames, "test/first")
	time.Sleep(300 * time.Millisecond) // the stream settles into its wait
	before := log.reads.Load()
	time.Sleep(time.Second)
	if got := log.reads.Load() - before; got != 0 {
		t.Fatalf("a quiet stream read the log %d times in a second, want 0", got)
	}
	if err := k.Record(context.Background(), "test/second", "", nil); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, frames, "test/second")
}

// Event streams are capped per credential and in total: past either cap
// the stream is refused with a 429 of kind too_many naming the limit, and
// a closed stream frees its place.
// Seen failing without the fix (no acquire in stream): every stream was
// served with a 200.
func TestEventStreamLimits(t *testing.T) {
	_, srv := streamKernel(t, kernel.NewMemoryLog(), adminapi.Options{MaxStreamsPerCredential: 2, MaxStreams: 3})
	first, closeFirst := openStream(t, srv, "one", "")
	for _, tc := range []struct {
		tok    string
		status int
		limit  string
	}{
		{"one", 200, ""},
		{"one", 429, "credential one already holds 2 streams (event and chat streams together), the limit per credential"},
		{"two", 200, ""},
		{"two", 429, "the kernel already serves 3 streams (event and chat streams together), its limit"},
	} {
		resp, _ := openStream(t, srv, tc.tok, "")
		if resp.StatusCode != tc.status {
			t.Fatalf("a stream of %s = %d, want %d", tc.tok, resp.StatusCode, tc.status)
		}
		if tc.limit == "" {
			continue
		}
		raw, _ := io.ReadAll(resp.Body)
		var body struct {
			Error struct{ Message, Kind string }
		}
		if json.Unmarshal(raw, &body) != nil || body.Error.Kind != "too_many" || !strings.Contains(body.Error.Message, tc.limit) {
			t.Fatalf("refused stream = %s, want kind too_many naming %q", raw, tc.limit)
		}
	}
	if first.StatusCode != 200 {
		t.Fatalf("first stream = %d", first.StatusCode)
	}
	closeFirst()
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, _ := openStream(t, srv, "one", "")
		if resp.StatusCode == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream never freed its place: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
