package adminapi

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

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
		return 0, smshttp.NewError(smshttp.KindValidation, "keepalive must be a whole number of seconds from 1 to 60")
	}
	return time.Duration(n) * time.Second, nil
}

// stream serves the event log as server-sent events, one "data:" frame per
// event with its sequence number as the id, until the client goes away. It
// counts against the caller's and the kernel's stream limits.
func (a *admin) stream(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
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
	release, err := a.streams.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &smshttp.Response{Headers: versionHeaders(), Stream: func(w http.ResponseWriter) {
		defer release()
		a.pump(r.Raw.Context(), adminv1.StartSSE(w), streamPage{after, limit, every})
	}}, nil
}

// streamPage is where a stream starts, how many events it reads at once,
// and its keepalive period.
type streamPage struct {
	after     int64
	limit     int
	keepalive time.Duration
}

// pump writes events as they are appended. It reads the log once, then
// sleeps until the kernel appends an event (kernel.Appended) or the
// keepalive period passes, so a quiet stream costs no work; it also reads
// on each keepalive, in case another writer appended to the log.
func (a *admin) pump(ctx context.Context, w *adminv1.SSEWriter, p streamPage) {
	w.Flush()
	quiet := time.NewTimer(p.keepalive)
	defer quiet.Stop()
	for {
		appended := a.k.Appended() // before the read, so no append between the two is missed
		n, err := a.send(ctx, w, &p)
		if err != nil {
			return // the client went away, or the log failed: the client reconnects with Last-Event-ID
		}
		if n > 0 {
			w.Flush()
			quiet.Reset(p.keepalive)
		}
		if n == p.limit {
			continue // a full page: more may wait
		}
		select {
		case <-ctx.Done():
			return
		case <-appended:
		case <-quiet.C:
			if err := w.Comment("keepalive"); err != nil {
				return
			}
			w.Flush()
			quiet.Reset(p.keepalive)
		}
	}
}

// send writes the events after p.after, at most p.limit of them, and moves
// p.after past them. It answers how many it wrote.
func (a *admin) send(ctx context.Context, w *adminv1.SSEWriter, p *streamPage) (int, error) {
	events, err := a.k.Events(ctx, p.after, p.limit)
	if err != nil {
		return 0, err
	}
	for _, e := range wireEvents(events) {
		if err := w.Send(strconv.FormatInt(e.Seq, 10), e); err != nil {
			return 0, err // the client went away
		}
		p.after = e.Seq
	}
	return len(events), nil
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
