package adminv1_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// The writer frames each event as an id line and one data line of
// compact JSON, keepalives as comments, and the reader gives back the
// ids and data and skips the comments. Seen failing with ReadSSE keeping
// the previous frame's id on a frame without one.
func TestSSERoundTrip(t *testing.T) {
	rec := httptest.NewRecorder()
	w := adminv1.StartSSE(rec)
	if err := w.Send("7", adminv1.Event{Seq: 7, Type: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Comment("keepalive"); err != nil {
		t.Fatal(err)
	}
	if err := w.Send("", adminv1.ChatEvent{Type: adminv1.ChatDone}); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if ct := rec.Header().Get("Content-Type"); ct != adminv1.EventStreamType || rec.Code != http.StatusOK {
		t.Fatalf("answer = %d %q, want 200 %s", rec.Code, ct, adminv1.EventStreamType)
	}
	want := "id: 7\ndata: {\"seq\":7,\"type\":\"a\",\"time\":\"0001-01-01T00:00:00Z\"}\n\n: keepalive\n\ndata: {\"type\":\"done\"}\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("stream = %q, want %q", got, want)
	}
	var got []string
	err := adminv1.ReadSSE(strings.NewReader(want), func(f adminv1.SSEFrame) error {
		got = append(got, f.ID+"|"+string(f.Data))
		return nil
	})
	if err != nil || len(got) != 2 || got[0] != `7|{"seq":7,"type":"a","time":"0001-01-01T00:00:00Z"}` || got[1] != `|{"type":"done"}` {
		t.Fatalf("frames = %q, %v", got, err)
	}
}

// A line over MaxFrameBytes is an error, never a frame cut short. Seen
// failing with the scanner's buffer unbounded (the frame was delivered).
func TestSSEFrameBound(t *testing.T) {
	long := "data: \"" + strings.Repeat("x", adminv1.MaxFrameBytes) + "\"\n\n"
	err := adminv1.ReadSSE(strings.NewReader(long), func(adminv1.SSEFrame) error {
		t.Fatal("an oversized frame was delivered")
		return nil
	})
	if err == nil {
		t.Fatal("ReadSSE of an oversized frame: nil error")
	}
	stop := errors.New("stop")
	if err := adminv1.ReadSSE(strings.NewReader("data: 1\n\ndata: 2\n\n"), func(adminv1.SSEFrame) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("ReadSSE = %v, want fn's error", err)
	}
}

// An answer naming another version of the API is refused; one naming
// none (an older kernel) is read. Seen failing with checkVersion
// returning nil.
func TestVersionChecked(t *testing.T) {
	var version atomic.Value
	version.Store("v2")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if v := version.Load().(string); v != "" {
			w.Header().Set(adminv1.VersionHeader, v)
		}
		_, _ = w.Write([]byte(`{"kernel":"k"}`))
	}))
	t.Cleanup(srv.Close)
	c := adminv1.New(srv.URL, "", nil)
	if _, err := c.State(context.Background()); err == nil || !strings.Contains(err.Error(), "admin API v2") {
		t.Fatalf("State from a v2 kernel: %v, want an error naming v2", err)
	}
	version.Store("")
	if s, err := c.State(context.Background()); err != nil || s.Kernel != "k" {
		t.Fatalf("State from a kernel naming no version = %+v, %v", s, err)
	}
}
