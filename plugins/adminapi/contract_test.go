package adminapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// route is one admin API route and the adminv1 type its answer decodes
// into: answer for a JSON answer, event for each frame of an event
// stream; neither for a text answer (probes, metrics).
type route struct {
	method, path  string
	answer, event func() any
}

// contract lists every route of the admin API.
var contract = []route{
	{"GET", adminv1.RouteState, func() any { return &adminv1.State{} }, nil},
	{"GET", adminv1.RouteCatalog, func() any { return &adminv1.Catalog{} }, nil},
	{"POST", adminv1.RoutePlugins, func() any { return &adminv1.Verdict{} }, nil},
	{"GET", adminv1.RoutePlugin, func() any { return &adminv1.Installed{} }, nil},
	{"GET", adminv1.RoutePluginStatus, func() any { return &adminv1.PluginStatus{} }, nil},
	{"POST", adminv1.RoutePluginEnable, func() any { return &adminv1.Fiber{} }, nil},
	{"POST", adminv1.RoutePluginDisable, func() any { return &adminv1.Fiber{} }, nil},
	{"DELETE", adminv1.RoutePlugin, func() any { return &adminv1.Uninstalled{} }, nil},
	{"GET", adminv1.RouteApprovals, func() any { return &adminv1.Approvals{} }, nil},
	{"POST", adminv1.RouteApprove, func() any { return &adminv1.Verdict{} }, nil},
	{"POST", adminv1.RouteReject, func() any { return &adminv1.Verdict{} }, nil},
	{"POST", adminv1.RouteChat, func() any { return &adminv1.ChatReply{} }, nil},
	{"POST", adminv1.RouteChatStream, nil, func() any { return &adminv1.ChatEvent{} }},
	{"GET", adminv1.RouteEvents, func() any { return &adminv1.EventPage{} }, nil},
	{"GET", adminv1.RouteEventStream, nil, func() any { return &adminv1.Event{} }},
	{"GET", adminv1.RouteHealthz, nil, nil},
	{"GET", adminv1.RouteReadyz, nil, nil},
	{"GET", adminv1.RouteMetrics, nil, nil},
}

// answered records the routes that gave a 2xx answer in any test.
var answered sync.Map

// TestMain runs the tests, then checks that they had every route of the
// contract answer at least once (unless -run chose some tests only). Seen
// failing with the GET /api/plugins/{id} call taken out of
// TestEveryRouteAnswers.
func TestMain(m *testing.M) {
	code := m.Run()
	if f := flag.Lookup("test.run"); code == 0 && (f == nil || f.Value.String() == "") {
		for _, r := range contract {
			if _, ok := answered.Load(r.method + " " + r.path); !ok {
				fmt.Fprintf(os.Stderr, "the contract check saw no 2xx answer of %s %s: a test must call it\n", r.method, r.path)
				code = 1
			}
		}
	}
	os.Exit(code)
}

// contractServer serves h for the test, checking every answer against the
// client's types: a JSON answer of an admin route must decode into its
// adminv1 type with unknown fields refused, each frame of a stream into
// its event type, and an error into adminv1.ErrorAnswer; a 2xx answer
// names adminv1.Version. Seen failing (TestPluginLifecycle,
// TestEveryRouteAnswers) with a stray "stray":"x" field added to the
// answer of DELETE /api/plugins/{id}: "json: unknown field \"stray\"".
func contractServer(t *testing.T, h http.Handler) *httptest.Server {
	var mu sync.Mutex
	var failures []string
	t.Cleanup(func() { // after the server closed: no handler runs any more
		mu.Lock()
		defer mu.Unlock()
		for _, f := range failures {
			t.Errorf("contract: %s", f)
		}
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tee := &teeWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(tee, r)
		if err := checkAnswer(r, tee); err != nil {
			mu.Lock()
			failures = append(failures, fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err))
			mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// checkAnswer checks one answer against the contract.
func checkAnswer(r *http.Request, tee *teeWriter) error {
	rt, ok := routeOf(r.Method, r.URL.Path)
	body := tee.body.Bytes()
	switch {
	case !ok || tee.status == http.StatusNotModified:
		return nil
	case tee.status >= 300:
		if !strings.HasPrefix(tee.Header().Get("Content-Type"), "application/json") {
			return nil // the probes' text
		}
		return strict(body, &adminv1.ErrorAnswer{})
	}
	answered.Store(rt.method+" "+rt.path, true)
	if rt.answer == nil && rt.event == nil {
		return nil
	}
	if v := tee.Header().Get(adminv1.VersionHeader); v != adminv1.Version {
		return fmt.Errorf("%s is %q, want %q", adminv1.VersionHeader, v, adminv1.Version)
	}
	if rt.event == nil {
		return strict(body, rt.answer())
	}
	err := adminv1.ReadSSE(bytes.NewReader(body), func(f adminv1.SSEFrame) error {
		return strict(f.Data, rt.event())
	})
	return err
}

// strict decodes one JSON value into v, refusing unknown fields.
func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w in %.300s", err, raw)
	}
	if dec.More() {
		return errors.New("trailing data after the answer")
	}
	return nil
}

// routeOf finds the contract route of a request; ":id" matches one
// path segment.
func routeOf(method, path string) (route, bool) {
	segs := strings.Split(path, "/")
	for _, rt := range contract {
		want := strings.Split(rt.path, "/")
		if rt.method != method || len(want) != len(segs) {
			continue
		}
		same := true
		for i := range want {
			if want[i] != segs[i] && (want[i] != ":id" || segs[i] == "") {
				same = false
			}
		}
		if same {
			return rt, true
		}
	}
	return route{}, false
}

// teeWriter passes an answer through and keeps a copy of it.
type teeWriter struct {
	http.ResponseWriter
	status int
	mu     sync.Mutex
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.body.Write(p)
	w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher.
func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets an http.ResponseController reach the connection.
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Every route answers once with success, so the contract check sees the
// routes the other tests call only to be refused.
func TestEveryRouteAnswers(t *testing.T) {
	f := setup(t, options{token: token})
	noop := map[string]any{"manifest": map[string]any{"id": "agent.noop", "version": "1"},
		"code": "export default async function activate(cap) {}"}
	if r := f.do(t, request{"POST", adminv1.RoutePlugins, token, noop}); r.str("status") != "mounted" {
		t.Fatalf("submit = %d %s, want mounted", r.status, r.text)
	}
	v := f.do(t, request{"POST", adminv1.RoutePlugins, token, routePlugin("1")})
	reject := adminv1.Path(adminv1.RouteReject, v.str("approvalId"))
	calls := []request{
		{"GET", adminv1.Path(adminv1.RoutePlugin, "agent.noop"), token, nil},
		{"GET", adminv1.Path(adminv1.RoutePluginStatus, "agent.noop"), token, nil},
		{"GET", adminv1.Path(adminv1.RoutePluginStatus, "agent.hello"), token, nil},
		{"POST", reject, token, adminv1.Decision{By: "ada", CodeHash: v.str("codeHash")}},
		{"POST", adminv1.Path(adminv1.RoutePluginDisable, "agent.noop"), token, nil},
		{"DELETE", adminv1.Path(adminv1.RoutePlugin, "agent.noop"), token, nil},
		{"GET", adminv1.RouteReadyz, "", nil},
	}
	for _, rq := range calls {
		if r := f.do(t, rq); r.status != http.StatusOK {
			t.Errorf("%s %s = %d %s, want 200", rq.method, rq.path, r.status, r.text)
		}
	}
}
