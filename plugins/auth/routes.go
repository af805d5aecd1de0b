package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// Routes under /api/auth, part of the admin API's wire contract.
const (
	RouteLogin  = adminv1.RouteLogin
	RouteLogout = adminv1.RouteLogout
	RouteMe     = adminv1.RouteMe
	RouteUsers  = adminv1.RouteUsers
	RouteUser   = adminv1.RouteUser
)

// Cookie names: CookieSecure over TLS (or with Options.SecureCookie),
// which browsers accept only Secure, for the host alone, on every path.
const (
	Cookie       = "sms_session"
	CookieSecure = "__Host-sms_session"
)

func (s *service) routes() []smshttp.Route {
	admin := smshttp.ScopeAdmin
	routes := []smshttp.Route{
		// Open to anyone: signing in, out, and asking who one is.
		{Method: http.MethodPost, Path: RouteLogin, Handler: s.postLogin, Scope: smshttp.ScopeRead, Public: open},
		{Method: http.MethodPost, Path: RouteLogout, Handler: s.postLogout, Scope: smshttp.ScopeRead, Public: open},
		{Method: http.MethodGet, Path: RouteMe, Handler: s.getMe, Scope: smshttp.ScopeRead, Public: open},
		{Method: http.MethodGet, Path: RouteUsers, Handler: s.getUsers, Scope: admin, Admin: true},
		{Method: http.MethodPost, Path: RouteUsers, Handler: s.postUser, Scope: admin, Admin: true},
		{Method: http.MethodGet, Path: RouteUser, Handler: s.getUser, Scope: admin, Admin: true},
		{Method: http.MethodPost, Path: RouteUser + "/password", Handler: s.postPassword, Scope: admin, Admin: true},
		{Method: http.MethodPost, Path: RouteUser + "/admin", Handler: s.postAdmin, Scope: admin, Admin: true},
		{Method: http.MethodPost, Path: RouteUser + "/deactivate", Handler: s.postDeactivate, Scope: admin, Admin: true},
		{Method: http.MethodPost, Path: RouteUser + "/activate", Handler: s.postActivate, Scope: admin, Admin: true},
	}
	for i := range routes {
		routes[i].Handler = Versioned(routes[i].Handler)
	}
	return routes
}

func open(*smshttp.Request) bool { return true }

// httpError gives an error of this package its kind; others pass as they are.
func httpError(err error) error {
	var t *throttledError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &t):
		return &smshttp.Error{Kind: smshttp.KindTooMany, Message: err.Error()}
	case errors.Is(err, ErrInvalid):
		return smshttp.NewError(smshttp.KindValidation, err.Error())
	case errors.Is(err, ErrNotFound):
		return smshttp.NewError(smshttp.KindNotFound, err.Error())
	case errors.Is(err, ErrConflict):
		return smshttp.NewError(smshttp.KindConflict, err.Error())
	case errors.Is(err, ErrBadLogin):
		return smshttp.NewError(smshttp.KindAuth, err.Error())
	case errors.Is(err, ErrBusy):
		return smshttp.NewError(smshttp.KindTooMany, err.Error())
	}
	return err
}

// needCSRF refuses a request without CSRFHeader.
func needCSRF(r *http.Request, what string) error {
	if r == nil || r.Header.Get(CSRFHeader) == "" {
		return smshttp.NewError(smshttp.KindForbidden, fmt.Sprintf("%s needs the %s header (any value): a cross-site form cannot send it", what, CSRFHeader))
	}
	return nil
}

type loginBody struct {
	Login    string `json:"login"`
	Password string `json:"password"`
}

// me is what /api/auth/me and a login answer.
func me(p smshttp.Principal, u *User) adminv1.Me {
	out := adminv1.Me{Authenticated: p.Authenticated, Name: p.Name}
	for _, sc := range p.Scopes {
		out.Scopes = append(out.Scopes, string(sc))
	}
	if u != nil {
		w := adminv1.User(*u)
		out.User = &w
	}
	return out
}

func (s *service) postLogin(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	if err := needCSRF(r.Raw, "a login"); err != nil {
		return nil, err
	}
	var b loginBody
	if err := smshttp.DecodeBody(r, &b, `{"login":"...","password":"..."}`); err != nil {
		return nil, err
	}
	u, value, err := s.login(ctx, b.Login, b.Password)
	if err != nil {
		return nil, httpError(err)
	}
	p := s.principal(u)
	return &smshttp.Response{Status: http.StatusOK, Headers: map[string]string{"Set-Cookie": s.cookie(r.Raw, value).String()},
		Body: me(p, &u)}, nil
}

func (s *service) postLogout(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	if value, ok := s.cookieValue(r.Raw); ok {
		if err := needCSRF(r.Raw, "a logout"); err != nil {
			return nil, err
		}
		if err := s.sess.end(ctx, value); err != nil {
			return nil, err
		}
	}
	gone := s.cookie(r.Raw, "")
	gone.MaxAge = -1
	return &smshttp.Response{Status: http.StatusOK, Headers: map[string]string{"Set-Cookie": gone.String()},
		Body: map[string]any{"loggedOut": true}}, nil
}

func (s *service) getMe(ctx context.Context, _ *smshttp.Request) (*smshttp.Response, error) {
	var user *User
	if u, ok := s.WhoAmI(ctx); ok {
		user = &u
	}
	return smshttp.JSON(me(smshttp.PrincipalFrom(ctx), user)), nil
}

func (s *service) getUsers(ctx context.Context, _ *smshttp.Request) (*smshttp.Response, error) {
	users, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := adminv1.Users{Users: make([]adminv1.User, len(users))}
	for i, u := range users {
		out.Users[i] = adminv1.User(u)
	}
	return smshttp.JSON(out), nil
}

func (s *service) postUser(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	var b NewUser
	if err := smshttp.DecodeBody(r, &b, `{"login":"...","password":"...","admin":false}`); err != nil {
		return nil, err
	}
	u, err := s.Create(ctx, b)
	if err != nil {
		return nil, httpError(err)
	}
	return &smshttp.Response{Status: http.StatusCreated, Body: adminv1.User(u)}, nil
}

func (s *service) getUser(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	u, err := s.Get(ctx, r.Params["login"])
	if err != nil {
		return nil, httpError(err)
	}
	return smshttp.JSON(adminv1.User(u)), nil
}

func (s *service) postPassword(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	var b struct {
		Password string `json:"password"`
	}
	if err := smshttp.DecodeBody(r, &b, `{"password":"..."}`); err != nil {
		return nil, err
	}
	return s.answerUser(ctx, r, s.SetPassword(ctx, r.Params["login"], b.Password))
}

func (s *service) postAdmin(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	var b struct {
		Admin *bool `json:"admin"`
	}
	if err := smshttp.DecodeBody(r, &b, `{"admin":true|false}`); err != nil {
		return nil, err
	}
	if b.Admin == nil {
		return nil, smshttp.NewError(smshttp.KindValidation, `the body must be {"admin":true|false}`)
	}
	return s.answerUser(ctx, r, s.SetAdmin(ctx, r.Params["login"], *b.Admin))
}

func (s *service) postDeactivate(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	return s.answerUser(ctx, r, s.Deactivate(ctx, r.Params["login"]))
}

func (s *service) postActivate(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	return s.answerUser(ctx, r, s.Activate(ctx, r.Params["login"]))
}

// answerUser answers the user a change was made to, or the change's error.
func (s *service) answerUser(ctx context.Context, r *smshttp.Request, err error) (*smshttp.Response, error) {
	if err != nil {
		return nil, httpError(err)
	}
	return s.getUser(ctx, r)
}

// cookie is the session cookie carrying value.
func (s *service) cookie(r *http.Request, value string) *http.Cookie {
	secure := s.secure || r != nil && r.TLS != nil
	c := &http.Cookie{Name: Cookie, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure}
	if secure {
		c.Name = CookieSecure
	}
	if value != "" {
		c.MaxAge = int(s.sess.maxAge / time.Second)
	}
	return c
}

// cookieValue is the request's session cookie value, either name.
func (s *service) cookieValue(r *http.Request) (string, bool) {
	if r == nil {
		return "", false
	}
	for _, name := range []string{CookieSecure, Cookie} {
		if c, err := r.Cookie(name); err == nil && c.Value != "" {
			return c.Value, true
		}
	}
	return "", false
}

// authenticate is the authenticator: a live session's user, refused on a
// state-changing request without CSRFHeader.
func (s *service) authenticate(r *http.Request) (smshttp.Principal, error) {
	value, ok := s.cookieValue(r)
	if !ok {
		return smshttp.Principal{}, nil
	}
	u, ok := s.sess.user(r.Context(), value)
	if !ok {
		return smshttp.Principal{}, nil
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if err := needCSRF(r, r.Method+" "+r.URL.Path+" with a session cookie"); err != nil {
			return smshttp.Principal{}, err
		}
	}
	return s.principal(u), nil
}
