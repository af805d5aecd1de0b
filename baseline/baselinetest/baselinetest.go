package baselinetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/baseline/budget"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/scripted"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/agentloop"
	"github.com/sms-baseline/sms/plugins/auth"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
)

// Options configure New.
type Options struct {
	// Plugins are the application's system plugins.
	Plugins []kernel.Plugin
	// Approvals makes sensitive agent plugins wait for a human, as they do
	// in production. By default a test kernel mounts them at once (the
	// judge's AutoApprove, which taints the kernel), so a test of what a
	// plugin does need not approve it first.
	Approvals bool
	// Executor runs agent plugins; default the in-process goja executor.
	// Pass the isolated executor to test on what production runs.
	Executor kernel.Executor
	// Agent configures the chat agent (baseline.Options.Agent).
	Agent agentloop.Options
	// AdminToken guards the admin API; empty leaves it open.
	AdminToken string
	// Credentials are more bearer tokens (baseline.Options.Credentials).
	Credentials []smshttp.Credential
	// Turns, when set, runs the chat agent on the scripted model replaying
	// them, one turn per model call.
	Turns [][]contracts.Block
	// Model, when set, runs the chat agent on it; it wins over Turns.
	Model contracts.ModelService
	// Auth, when set, turns users and access control on (baseline.Options.Auth);
	// the default leaves them off, as local development does.
	Auth *auth.Options
	// Logger, when set, receives the kernel's logs.
	Logger *slog.Logger
	// ORM configures the ORM (baseline.Options.ORM).
	ORM orm.Options
	// Objects is the kernel's object store (baseline.Options.Objects).
	Objects contracts.ObjectStore
	// Services turns optional system plugins on (baseline.Options.Services)
	// and ServiceOptions configures them.
	Services       []string
	ServiceOptions baseline.ServiceOptions
	// Admin configures the admin API (baseline.Options.Admin).
	Admin adminapi.Options
	// Budget is the tenant's budget (baseline.Options.Budget).
	Budget budget.Config
	// Store, when set, is the kernel's store (closed with the kernel); the
	// default is a private in-memory SQLite database.
	Store contracts.Store
}

// Env is a running test kernel server, closed when the test ends.
type Env struct {
	*baseline.Baseline
	t testing.TB
}

// New boots a kernel server for t and closes it when t ends.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	model := opts.Model
	if model == nil && opts.Turns != nil {
		model = scripted.New(opts.Turns)
	}
	b, err := baseline.New(context.Background(), baseline.Options{
		Name: "test", Plugins: opts.Plugins, AdminToken: opts.AdminToken, Credentials: opts.Credentials, Model: model,
		Policy: judge.Policy{AutoApprove: !opts.Approvals}, Auth: opts.Auth, Store: opts.Store, Logger: opts.Logger,
		Executor: opts.Executor, Agent: opts.Agent, Services: opts.Services, ServiceOptions: opts.ServiceOptions, Objects: opts.Objects, ORM: opts.ORM,
		Admin: opts.Admin, Budget: opts.Budget,
	})
	if err != nil {
		t.Fatalf("baselinetest: boot: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("baselinetest: close: %v", err)
		}
	})
	return &Env{Baseline: b, t: t}
}

// Response is what Call returns: the status, the raw body and, when the
// body is JSON, its decoded value.
type Response struct {
	Status int
	Body   []byte
	JSON   any
}

// Call sends a request to the server: GET when body is nil, POST with body
// as JSON otherwise. Use Do for other methods or headers.
func (e *Env) Call(path string, body any) Response {
	e.t.Helper()
	method := http.MethodGet
	if body != nil {
		method = http.MethodPost
	}
	return e.Do(method, path, body, nil)
}

// Do sends a request with the given method, body and headers: a nil body
// sends none, an io.Reader is sent as it is (an upload; give its
// Content-Type in the headers), anything else as JSON.
func (e *Env) Do(method, path string, body any, header http.Header) Response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case io.Reader: // sent as it is: an upload
		rd = b
	default:
		raw, err := json.Marshal(body)
		if err != nil {
			e.t.Fatalf("baselinetest: encode body: %v", err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	r := Response{Status: rec.Code, Body: rec.Body.Bytes()}
	_ = json.Unmarshal(r.Body, &r.JSON) // not JSON: JSON stays nil
	return r
}

// Tick runs the scheduler's due jobs at now.
func (e *Env) Tick(now time.Time) {
	e.t.Helper()
	if err := e.Baseline.Tick(context.Background(), now); err != nil {
		e.t.Fatalf("baselinetest: tick: %v", err)
	}
}

// FastHash is an argon2id cost for tests: far too cheap for production,
// quick enough for a test that logs in many times.
var FastHash = auth.HashParams{Time: 1, MemoryKiB: 64, Threads: 1}

// Login logs in and returns the headers a browser would send with the
// session from then on: its cookie and the CSRF header. It fails the test
// unless the login succeeds.
func (e *Env) Login(login, password string) http.Header {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodPost, auth.RouteLogin,
		bytes.NewReader(fmt.Appendf(nil, `{"login":%q,"password":%q}`, login, password)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(auth.CSRFHeader, "1")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("baselinetest: login %s: %d %s", login, rec.Code, rec.Body.String())
	}
	h := http.Header{auth.CSRFHeader: {"1"}}
	for _, c := range rec.Result().Cookies() {
		h.Add("Cookie", c.Name+"="+c.Value)
	}
	return h
}

// User creates a user as admin (the headers of an admin's session), adds
// them to groups and returns their session's headers. It fails the test
// unless each step succeeds.
func (e *Env) User(admin http.Header, login, password string, groups ...string) http.Header {
	e.t.Helper()
	if r := e.Do(http.MethodPost, auth.RouteUsers, map[string]any{"login": login, "password": password}, admin); r.Status != http.StatusCreated {
		e.t.Fatalf("baselinetest: create user %s: %d %s", login, r.Status, r.Body)
	}
	for _, g := range groups {
		if r := e.Do(http.MethodPost, adminv1.RouteGroups+"/"+g+"/members", map[string]any{"login": login}, admin); r.Status != http.StatusOK {
			e.t.Fatalf("baselinetest: add %s to %s: %d %s", login, g, r.Status, r.Body)
		}
	}
	return e.Login(login, password)
}
