package http

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// PluginID is the id of the http system plugin.
const PluginID = "sms.http"

// Plugin returns the http system plugin. It defines the route point (open to
// agent plugins; the judge's policy decides whether one needs approval),
// the system-only reserved-prefix and authenticator points, the caller key
// agent code reads, and provides Key, a system-only key whose value is the
// Service.
func Plugin(opts Options) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1", Provide: []string{Key, CallerKey},
			Description: "Serves contributed routes over HTTP"},
		Activate: func(_ context.Context, c *kernel.Context) error { return activate(c, opts) },
	}
}

func activate(c *kernel.Context, opts Options) error {
	api := c.Kernel()
	for _, cr := range opts.Credentials {
		if strings.HasPrefix(cr.Name, UserPrefix) {
			return NewError(KindValidation, fmt.Sprintf("credential %q: a credential's name may not start with %q, which names users", cr.Name, UserPrefix))
		}
	}
	creds := hashCredentials(opts.Credentials)
	s := &server{routes: &table{}, logger: c.Logger(), creds: creds, finders: newTokenFinders(creds),
		reserved: newReservations(), auths: map[string]Authenticator{}}
	system := func(plugin string) bool {
		v, ok := api.Fiber(plugin)
		return ok && v.Trust == kernel.TrustSystem
	}
	if err := errors.Join(
		api.DefineKey(Key, kernel.KeyMeta{Description: "the HTTP handler serving every route",
			MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem}),
		api.DefineKey(CallerKey, kernel.KeyMeta{Description: "invoke current: who the request or chat turn being served comes from",
			MinProviderTrust: kernel.TrustSystem}),
		api.DefinePoint(RoutePoint, kernel.PointMeta{
			Description:  "{method, path, handler}: an HTTP route; path segments may be :params",
			Requires:     []string{contracts.CapHTTPRoute},
			ValidateFrom: func(plugin string, item any) error { return s.validate(plugin, system(plugin), item) },
		}),
		api.DefinePoint(ReservedPoint, kernel.PointMeta{Description: "a path prefix reserved for system routes",
			MinContributorTrust: kernel.TrustSystem, Validate: validateReserved}),
		api.DefinePoint(AuthenticatorPoint, kernel.PointMeta{Description: "http.Authenticator: says who a request comes from",
			MinContributorTrust: kernel.TrustSystem, Validate: validateAuthenticator}),
	); err != nil {
		return err
	}
	if err := s.observe(api, system); err != nil {
		return err
	}
	if err := c.Provide(CallerKey, caller{}); err != nil {
		return err
	}
	return c.Provide(Key, Service(s))
}

// observe keeps the routing table, the reservations and the
// authenticators in step with their points.
func (s *server) observe(api *kernel.API, system func(string) bool) error {
	return errors.Join(
		api.ObservePoint(RoutePoint, kernel.Observer{
			Added: func(x kernel.Contribution) {
				r, err := parseItem(x.Item)
				if err != nil {
					return // validated on the way in; contributions made before this plugin are skipped
				}
				r.id, r.plugin, r.system = x.ID, x.Fiber, system(x.Fiber)
				s.routes.add(r)
			},
			Removed: func(x kernel.Contribution) { s.routes.remove(x.ID) },
			// A transition keeps the old version's routes until the new
			// version's are in; the table prefers the older of two equal
			// routes, so each request goes to one whole version.
			LateRemove: true,
		}),
		api.ObservePoint(ReservedPoint, kernel.Observer{
			Added:   func(x kernel.Contribution) { s.reserved.add(x.ID, x.Item.(string)) },
			Removed: func(x kernel.Contribution) { s.reserved.remove(x.ID) },
		}),
		api.ObservePoint(AuthenticatorPoint, kernel.Observer{
			Added: func(x kernel.Contribution) {
				s.mu.Lock()
				s.auths[x.ID] = x.Item.(Authenticator)
				s.mu.Unlock()
			},
			Removed: func(x kernel.Contribution) {
				s.mu.Lock()
				delete(s.auths, x.ID)
				s.mu.Unlock()
			},
		}),
	)
}

// validate checks a route's shape, that no other plugin serves the same
// requests already (a plugin's own routes do not conflict, so its new
// version can take them over), that an agent route stays out of the
// reserved prefixes, and that a system route under /api names its scope.
func (s *server) validate(plugin string, system bool, item any) error {
	r, err := parseItem(item)
	if err != nil {
		return err
	}
	if !system && s.reserved.covers(r.parts) {
		return fmt.Errorf("route path %q is reserved for the system (%s and prefixes system plugins reserve)", r.path,
			strings.Join(DefaultReserved, ", "))
	}
	if system && r.scope == "" && len(r.parts) > 0 && r.parts[0] == "api" {
		return fmt.Errorf("system route %s %s is under /api and needs a Scope", r.method, r.path)
	}
	if x := s.routes.conflict(r); x != nil && x.plugin != plugin {
		return fmt.Errorf("%s %s is already served by plugin %s", r.method, r.path, x.plugin)
	}
	return nil
}

func validateAuthenticator(item any) error {
	if a, ok := item.(Authenticator); !ok || a.Name == "" || a.Authenticate == nil {
		return NewError(KindValidation, "an authenticator is http.Authenticator{Name, Authenticate}")
	}
	return nil
}

// caller is the value of CallerKey.
type caller struct{}

// Invoke implements kernel.Invoker: "current" answers the principal the
// call's context carries, with no secret in it.
func (caller) Invoke(ctx context.Context, method string, _ []any) (any, error) {
	if method != "current" {
		return nil, NewError(KindNotFound, fmt.Sprintf("caller has no method %q (only current)", method))
	}
	p := PrincipalFrom(ctx)
	out := map[string]any{"authenticated": p.Authenticated}
	if p.Authenticated {
		scopes := make([]any, len(p.Scopes))
		for i, sc := range p.Scopes {
			scopes[i] = string(sc)
		}
		out["name"], out["scopes"] = p.Name, scopes
		if p.UserID != 0 {
			out["userId"] = p.UserID
		}
	}
	return out, nil
}
