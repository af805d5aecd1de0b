package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// streamPoll is how often the event stream looks for new events.
const streamPoll = 200 * time.Millisecond

// StreamKeepalive is the longest the event stream stays silent by
// default: when no event came for that long it sends a comment line, so a
// client can tell a quiet kernel from a hung one by a read deadline of a
// few keepalives. A client asks for another period (whole seconds, 1 to
// 60) with the keepalive query parameter.
const StreamKeepalive = 15 * time.Second

// keepalive is the stream's keepalive period, from the query.
func keepalive(r *smshttp.Request) (time.Duration, error) {
	s := r.Query["keepalive"]
	if s == "" {
		return StreamKeepalive, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 60 {
		return 0, smshttp.Errorf(smshttp.KindValidation, "keepalive must be a whole number of seconds from 1 to 60")
	}
	return time.Duration(n) * time.Second, nil
}

// stream serves the event log as server-sent events, one "data:" frame per
// event with its sequence number as the id, until the client goes away.
func (a *admin) stream(_ context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	after, limit, err := eventPage(r)
	if err != nil {
		return nil, err
	}
	if id, err := strconv.ParseInt(r.Raw.Header.Get("Last-Event-ID"), 10, 64); err == nil && id >= 0 {
		after = id // a reconnecting EventSource resumes after the last event it saw
	}
	every, err := keepalive(r)
	if err != nil {
		return nil, err
	}
	return &smshttp.Response{Stream: func(w http.ResponseWriter) { a.pump(r.Raw.Context(), w, streamPage{after, limit, every}) }}, nil
}

// streamPage is where a stream starts, how many events it reads at once,
// and its keepalive period.
type streamPage struct {
	after     int64
	limit     int
	keepalive time.Duration
}

func (a *admin) pump(ctx context.Context, w http.ResponseWriter, p streamPage) {
	after, limit := p.after, p.limit
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	tick := time.NewTicker(streamPoll)
	defer tick.Stop()
	wrote := time.Now()
	for {
		events, err := a.k.Events(ctx, after, limit)
		if err != nil {
			return // the client went away, or the log failed: the client reconnects with Last-Event-ID
		}
		if len(events) == 0 && time.Since(wrote) >= p.keepalive {
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil {
				return
			}
			wrote = time.Now()
		}
		if len(events) > 0 {
			wrote = time.Now()
		}
		for _, e := range events {
			raw, _ := json.Marshal(e)
			if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", e.Seq, raw); err != nil {
				return // the client went away
			}
			after = e.Seq
		}
		flush()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (a *admin) ready(context.Context, *smshttp.Request) (*smshttp.Response, error) {
	if a.opts.Ready != nil {
		if err := a.opts.Ready(); err != nil {
			return &smshttp.Response{Status: http.StatusServiceUnavailable, Body: "not ready: " + err.Error()}, nil
		}
	}
	return &smshttp.Response{Body: "ok"}, nil
}

// metrics writes the Prometheus text exposition format.
func (a *admin) metrics(context.Context, *smshttp.Request) (*smshttp.Response, error) {
	s := a.k.State()
	states := map[string]int{}
	for _, f := range s.Fibers {
		states[string(f.State)+"\x00"+f.Trust.String()]++
	}
	keys := make([]string, 0, len(states))
	for k := range states {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# HELP sms_fibers Plugins by lifecycle state and trust tier.\n# TYPE sms_fibers gauge\n")
	for _, k := range keys {
		state, trust, _ := strings.Cut(k, "\x00")
		fmt.Fprintf(&b, "sms_fibers{state=%q,trust=%q} %d\n", state, trust, states[k])
	}
	fmt.Fprintf(&b, "# HELP sms_pending_approvals Submissions waiting for a human.\n# TYPE sms_pending_approvals gauge\nsms_pending_approvals %d\n", len(a.judge.Pending()))
	b.WriteString("# HELP sms_taint Taint flags set since boot (1 = set).\n# TYPE sms_taint gauge\n")
	for _, name := range s.Taint.Names() {
		fmt.Fprintf(&b, "sms_taint{flag=%q} 1\n", name)
	}
	fmt.Fprintf(&b, "# HELP sms_routes Routes being served.\n# TYPE sms_routes gauge\nsms_routes %d\n", len(a.http.Routes()))
	return &smshttp.Response{Headers: map[string]string{"Content-Type": "text/plain; version=0.0.4; charset=utf-8"}, Body: b.String()}, nil
}
