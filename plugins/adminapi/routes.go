package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

func (a *admin) routes() []smshttp.Route {
	route := func(method, path string, scope smshttp.Scope, h smshttp.Handler) smshttp.Route {
		return smshttp.Route{Method: method, Path: path, Scope: scope, Handler: h, Admin: true}
	}
	read, chat, approve, adm := smshttp.ScopeRead, smshttp.ScopeChat, smshttp.ScopeApprove, smshttp.ScopeAdmin
	return append(a.transitionRoutes(route), []smshttp.Route{
		route("GET", adminv1.RouteBudget, read, a.budget),
		route("GET", adminv1.RouteState, read, a.state),
		route("GET", adminv1.RouteCatalog, read, func(context.Context, *smshttp.Request) (*smshttp.Response, error) {
			return answer(wireCatalog(a.k.Catalog())), nil
		}),
		route("POST", adminv1.RoutePlugins, chat, a.submit),
		route("GET", adminv1.RoutePlugin, read, a.export),
		route("GET", adminv1.RoutePluginStatus, read, a.status),
		route("GET", adminv1.RoutePluginVersions, read, a.versions),
		route("GET", adminv1.RoutePluginVersion, read, a.versionCode),
		route("POST", adminv1.RoutePluginEnable, adm, a.toggle(true)),
		route("POST", adminv1.RoutePluginDisable, adm, a.toggle(false)),
		route("DELETE", adminv1.RoutePlugin, adm, a.uninstall),
		route("GET", adminv1.RouteApprovals, read, func(context.Context, *smshttp.Request) (*smshttp.Response, error) {
			return answer(adminv1.Approvals{Approvals: a.located(wireApprovals(a.judge.Pending()))}), nil
		}),
		route("POST", adminv1.RouteApprove, approve, a.decide(true)),
		route("POST", adminv1.RouteReject, approve, a.decide(false)),
		// Chat is the application's too: its users talk to the agent on
		// the application listener, with a session or a chat credential.
		appRoute(route("POST", adminv1.RouteChat, chat, a.chat)),
		appRoute(route("POST", adminv1.RouteChatStream, chat, a.chatStream)),
		route("GET", adminv1.RouteEvents, read, a.events),
		route("GET", adminv1.RouteEventStream, read, a.stream),
		// Probes stay open and are served on the application listener too.
		{Method: "GET", Path: adminv1.RouteHealthz, Handler: func(context.Context, *smshttp.Request) (*smshttp.Response, error) {
			return &smshttp.Response{Body: "ok"}, nil
		}},
		{Method: "GET", Path: adminv1.RouteReadyz, Handler: a.ready},
		route("GET", adminv1.RouteMetrics, read, a.metrics),
	}...)
}

// appRoute serves r on the application listener as well as the admin one.
func appRoute(r smshttp.Route) smshttp.Route {
	r.Admin = false
	return r
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
		return nil, smshttp.NewError(smshttp.KindValidation, `the body must be {"manifest":{...},"code":"..."}`)
	}
	p, err := judge.DecodePlugin(raw)
	if err != nil {
		return nil, smshttp.NewError(smshttp.KindValidation, err.Error())
	}
	by, err := a.requester(ctx, r)
	if err != nil {
		return nil, err
	}
	// A new version of a plugin an admin disabled stays disabled (the
	// kernel keeps the hold), but replacing the code an admin stopped is
	// the admin's to do.
	if who := smshttp.PrincipalFrom(ctx); who.Authenticated && !who.Has(smshttp.ScopeAdmin) {
		if f, ok := a.k.Fiber(p.Manifest.ID); ok && f.Held {
			return nil, smshttp.NewError(smshttp.KindForbidden, fmt.Sprintf(
				"%s was disabled by an admin: submitting it anew replaces what an admin stopped, which needs the admin scope", p.Manifest.ID))

		}
	}
	v, err := a.judge.Submit(ctx, p.Manifest, p.Code, by)
	if err != nil {
		return nil, err
	}
	return answer(wireVerdict(v)), nil
}

// requester names who asked: the adminv1.RequestedByHeader value from a
// credential with the admin scope, else the credential's name, else
// "anonymous" on an open API. A header too long or with control
// characters is a validation error, never silently cut.
func (a *admin) requester(ctx context.Context, r *smshttp.Request) (string, error) {
	who := smshttp.PrincipalFrom(ctx)
	if !who.Authenticated {
		return "anonymous", nil
	}
	by := r.Headers[strings.ToLower(adminv1.RequestedByHeader)]
	if by == "" || !who.Has(smshttp.ScopeAdmin) {
		return who.Name, nil
	}
	if judge.ValidateDecider(by) != nil {
		return "", smshttp.NewError(smshttp.KindValidation, fmt.Sprintf(
			"the %s header must be at most %d bytes of printable UTF-8", adminv1.RequestedByHeader, judge.MaxDeciderBytes))

	}
	return by, nil
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
		return answer(wireFiber(v)), nil // a failed activation is in the view, not an error of the request
	}
}

// uninstall removes an agent plugin. ?force=true removes one another
// enabled plugin depends on (and taints the kernel); system plugins stay
// installed whatever the query says.
func (a *admin) uninstall(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	id := r.Params["id"]
	force := false
	switch r.Query["force"] {
	case "", "false":
	case "true":
		force = true
	default:
		return nil, smshttp.NewError(smshttp.KindValidation, `force must be "true" or "false", not `+strconv.Quote(r.Query["force"]))
	}
	if f, ok := a.k.Fiber(id); ok && f.Trust == kernel.TrustSystem {
		return nil, a.k.Uninstall(ctx, id, false) // refused: system plugins stay on
	}
	if err := a.k.Uninstall(ctx, id, force); err != nil {
		return nil, err
	}
	return answer(adminv1.Uninstalled{Uninstalled: id}), nil
}

func (a *admin) decide(approve bool) smshttp.Handler {
	return func(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
		var d adminv1.Decision
		if raw := bodyJSON(r); raw != nil {
			if err := json.Unmarshal(raw, &d); err != nil {
				return nil, smshttp.NewError(smshttp.KindValidation, `the body is {"by":"...","codeHash":"..."}: `+err.Error())
			}
		}
		by, err := a.decider(ctx, r, d.By)
		if err != nil {
			return nil, err
		}
		d.By = by
		if len(d.Groups) > 0 {
			if who := smshttp.PrincipalFrom(ctx); who.Authenticated && !who.Has(smshttp.ScopeAdmin) {
				return nil, smshttp.NewError(smshttp.KindForbidden,
					"only a credential with the admin scope relays the groups of who decides")
			}
			ctx = judge.WithDeciderGroups(ctx, d.Groups)
		}
		decide := a.judge.Reject
		if approve {
			decide = a.judge.Approve
		}
		v, err := decide(ctx, r.Params["id"], d.By, d.CodeHash)
		if err != nil {
			return nil, err
		}
		return answer(wireVerdict(v)), nil
	}
}

// decider names who decides: the body's "by" from a credential with the
// admin scope (the operator relays the Kubernetes user who approved),
// otherwise the requester. Another credential naming someone else is
// refused; the judge checks the name is printable.
func (a *admin) decider(ctx context.Context, r *smshttp.Request, by string) (string, error) {
	self, err := a.requester(ctx, r)
	if err != nil || by == "" {
		return self, err
	}
	who := smshttp.PrincipalFrom(ctx)
	if who.Authenticated && !who.Has(smshttp.ScopeAdmin) && by != who.Name {
		return "", smshttp.NewError(smshttp.KindForbidden, fmt.Sprintf(
			"credential %s may decide only as itself, not as %q: only a credential with the admin scope decides on someone's behalf", who.Name, by))

	}
	return by, nil
}

// eventPage reads after and limit from the query.
func eventPage(r *smshttp.Request) (int64, int, error) {
	after, limit := int64(0), 100
	if s := r.Query["after"]; s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, smshttp.NewError(smshttp.KindValidation, "after must be a non-negative integer")
		}
		after = n
	}
	if s := r.Query["limit"]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return 0, 0, smshttp.NewError(smshttp.KindValidation, "limit must be an integer from 1 to 1000")
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
	return answer(adminv1.EventPage{Events: wireEvents(events)}), nil
}
