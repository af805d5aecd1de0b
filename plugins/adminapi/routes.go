package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

func (a *admin) routes() []smshttp.Route {
	get := func(path string, h smshttp.Handler) smshttp.Route {
		return smshttp.Route{Method: "GET", Path: path, Handler: h}
	}
	mut := func(method, path string, h smshttp.Handler) smshttp.Route {
		return smshttp.Route{Method: method, Path: path, Handler: a.guard(h)}
	}
	return []smshttp.Route{
		get("/api/state", a.state),
		get("/api/catalog", func(context.Context, *smshttp.Request) (*smshttp.Response, error) {
			return smshttp.JSON(a.k.Catalog()), nil
		}),
		mut("POST", "/api/plugins", a.submit),
		get("/api/plugins/:id", a.export),
		mut("POST", "/api/plugins/:id/enable", a.toggle(true)),
		mut("POST", "/api/plugins/:id/disable", a.toggle(false)),
		mut("DELETE", "/api/plugins/:id", a.uninstall),
		get("/api/approvals", func(context.Context, *smshttp.Request) (*smshttp.Response, error) {
			return smshttp.JSON(map[string]any{"approvals": a.judge.Pending()}), nil
		}),
		mut("POST", "/api/approvals/:id/approve", a.decide(true)),
		mut("POST", "/api/approvals/:id/reject", a.decide(false)),
		mut("POST", "/api/chat", a.chat),
		mut("POST", "/api/chat/stream", a.chatStream),
		get("/api/events", a.events),
		get("/api/events/stream", a.stream),
		get("/healthz", func(context.Context, *smshttp.Request) (*smshttp.Response, error) {
			return &smshttp.Response{Body: "ok"}, nil
		}),
		get("/readyz", a.ready),
		get("/metrics", a.metrics),
	}
}

// stateView is GET /api/state.
type stateView struct {
	Kernel  string              `json:"kernel"`
	Auth    string              `json:"auth"` // "token" or "open"
	Fibers  []kernel.FiberView  `json:"fibers"`
	Pending []judge.Approval    `json:"pending"`
	Routes  []smshttp.RouteInfo `json:"routes"`
	// Collections is empty when the collections plugin is not active.
	Collections []collections.Collection `json:"collections"`
	Taint       kernel.TaintSet          `json:"taint"`
}

func (a *admin) state(context.Context, *smshttp.Request) (*smshttp.Response, error) {
	s := a.k.State()
	v := stateView{Kernel: s.Name, Auth: "open", Fibers: s.Fibers, Pending: a.judge.Pending(),
		Routes: a.http.Routes(), Taint: s.Taint}
	if a.opts.Token != "" {
		v.Auth = "token"
	}
	if v.Pending == nil {
		v.Pending = []judge.Approval{}
	}
	v.Collections = []collections.Collection{}
	if svc, err := kernel.Lookup[collections.Service](a.ctx, collections.Key); err == nil {
		v.Collections = svc.Definitions()
	}
	return smshttp.JSON(v), nil
}

// bodyJSON returns the request body as JSON text. A body sent with another
// content type (curl -d sends form encoding) arrives as a string and is
// taken as the JSON it holds.
func bodyJSON(r *smshttp.Request) []byte {
	switch b := r.Body.(type) {
	case nil:
		return nil
	case string:
		return []byte(b)
	default:
		raw, _ := json.Marshal(b) // decoded from JSON, so it encodes again
		return raw
	}
}

func (a *admin) submit(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	raw := bodyJSON(r)
	if raw == nil {
		return nil, smshttp.Errorf(smshttp.KindValidation, `the body must be {"manifest":{...},"code":"..."}`)
	}
	p, err := judge.DecodePlugin(raw)
	if err != nil {
		return nil, smshttp.Errorf(smshttp.KindValidation, err.Error())
	}
	by, err := a.requester(r)
	if err != nil {
		return nil, err
	}
	v, err := a.judge.Submit(ctx, p.Manifest, p.Code, by)
	if err != nil {
		return nil, err
	}
	return smshttp.JSON(v), nil
}

// requestedByHeader names on whose behalf a token holder (an operator, a
// CI job) calls the admin API. It is honoured only when the API is
// token-protected: on an open API anyone could claim any name.
const requestedByHeader = "X-Requested-By"

// maxRequesterBytes bounds requestedByHeader; 253 fits a Kubernetes
// object name or a DNS name.
const maxRequesterBytes = 253

// requester names who asked: the requestedByHeader value behind a token,
// else "admin" behind a token, else "anonymous". A header too long or with
// control characters is a validation error, never silently cut.
func (a *admin) requester(r *smshttp.Request) (string, error) {
	if a.opts.Token == "" {
		return "anonymous", nil
	}
	by := r.Headers[strings.ToLower(requestedByHeader)]
	if by == "" {
		return "admin", nil
	}
	if len(by) > maxRequesterBytes || !printable(by) {
		return "", smshttp.Errorf(smshttp.KindValidation, fmt.Sprintf(
			"the %s header must be at most %d bytes of printable UTF-8", requestedByHeader, maxRequesterBytes))
	}
	return by, nil
}

// printable reports whether s is valid UTF-8 with only printable runes.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if !unicode.IsPrint(c) {
			return false
		}
	}
	return true
}

func (a *admin) toggle(enable bool) smshttp.Handler {
	return func(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
		id := r.Params["id"]
		var err error
		if enable {
			err = a.k.Enable(ctx, id)
		} else {
			err = a.k.Disable(ctx, id)
		}
		v, ok := a.k.Fiber(id)
		if err != nil && (!ok || v.State != kernel.StateFailed) {
			return nil, err
		}
		return smshttp.JSON(v), nil // a failed activation is in the view, not an error of the request
	}
}

func (a *admin) uninstall(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	id := r.Params["id"]
	if err := a.k.Uninstall(ctx, id, false); err != nil {
		return nil, err
	}
	return smshttp.JSON(map[string]string{"uninstalled": id}), nil
}

// decision is the body of approve and reject.
type decision struct {
	By       string `json:"by"`
	CodeHash string `json:"codeHash"`
}

func (a *admin) decide(approve bool) smshttp.Handler {
	return func(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
		var d decision
		if raw := bodyJSON(r); raw != nil {
			if err := json.Unmarshal(raw, &d); err != nil {
				return nil, smshttp.Errorf(smshttp.KindValidation, `the body is {"by":"...","codeHash":"..."}: `+err.Error())
			}
		}
		if d.By == "" {
			by, err := a.requester(r)
			if err != nil {
				return nil, err
			}
			d.By = by
		}
		decide := a.judge.Reject
		if approve {
			decide = a.judge.Approve
		}
		v, err := decide(ctx, r.Params["id"], d.By, d.CodeHash)
		if err != nil {
			return nil, err
		}
		return smshttp.JSON(v), nil
	}
}

// eventPage reads after and limit from the query.
func eventPage(r *smshttp.Request) (int64, int, error) {
	after, limit := int64(0), 100
	if s := r.Query["after"]; s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, smshttp.Errorf(smshttp.KindValidation, "after must be a non-negative integer")
		}
		after = n
	}
	if s := r.Query["limit"]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return 0, 0, smshttp.Errorf(smshttp.KindValidation, "limit must be an integer from 1 to 1000")
		}
		limit = n
	}
	return after, limit, nil
}

func (a *admin) events(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	after, limit, err := eventPage(r)
	if err != nil {
		return nil, err
	}
	events, err := a.k.Events(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	if events == nil {
		events = []kernel.Event{}
	}
	return smshttp.JSON(map[string]any{"events": events}), nil
}
