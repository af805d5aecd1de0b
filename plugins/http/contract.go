package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/kernel"
)

// Key is the key whose value is the Service.
const Key = "http"

// RoutePoint is the point routes are contributed to.
const RoutePoint = "route"

// ReservedPoint is the system-only point of path prefixes reserved for
// system routes, on top of DefaultReserved. An item is a path such as
// "/auth": it reserves that path and everything under it.
const ReservedPoint = "reserved-prefix"

// AuthenticatorPoint is the system-only point of Authenticator items.
const AuthenticatorPoint = "authenticator"

// CallerKey is the key agent code reads to learn who it serves:
// cap.invoke('caller', 'current') answers the Principal of the request (or
// chat turn) being served, which holds no secret.
const CallerKey = "caller"

// DefaultReserved are the prefixes reserved for system routes. No agent
// route may be declared under them, and no request under them ever reaches
// an agent route.
var DefaultReserved = []string{"/api", "/healthz", "/readyz", "/metrics"}

// MaxBodyBytes is the largest request body a route receives.
const MaxBodyBytes = 1 << 20

// Service is the value of Key: the handler that serves every route.
type Service interface {
	http.Handler
	// AppHandler serves every route but the Admin ones, for an application
	// listener separate from the admin listener.
	AppHandler() http.Handler
	// Routes lists the routes being served, in contribution order.
	Routes() []RouteInfo
	// Secured reports whether any credential is configured: then every
	// route with a Scope needs a credential that holds it.
	Secured() bool
	// Credential is the principal of the configured credential name, as
	// a request bearing its token gets it; false for no such credential.
	Credential(name string) (Principal, bool)
}

// RouteInfo describes a served route.
type RouteInfo struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Plugin string `json:"plugin"`
	Scope  Scope  `json:"scope,omitempty"`
}

// Route is a route contributed by a system plugin.
type Route struct {
	Method  string
	Path    string
	Handler Handler
	// Scope is what a credential needs to call the route once any
	// credential is configured. Every system route under /api needs one;
	// "" leaves the route open (/healthz, /readyz).
	Scope Scope
	// Public, when set, reports whether this request needs no credential
	// at all, for example a read of a collection declared public.
	Public func(r *Request) bool
	// Admin routes are served only on the admin listener when the kernel
	// has one (Service.AppHandler leaves them out).
	Admin bool
	// Users admits every principal that stands for an application user
	// (Principal.UserID set), whatever its scopes: the handler's guard
	// decides what each user may do (the ORM's and the collections' REST
	// routes). Bearer credentials still need Scope.
	Users bool
	// RawBody leaves the request's body unread (Request.Body nil, past
	// MaxBodyBytes allowed): the handler streams it from Request.Raw, and
	// bounds it itself. For system routes such as uploads.
	RawBody bool
}

// Handler serves one request.
type Handler func(ctx context.Context, r *Request) (*Response, error)

// Request is what a handler receives. Body is the decoded JSON body, the
// raw text for other content types, or nil when empty.
type Request struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Params  map[string]string `json:"params"`
	Query   map[string]string `json:"query"`
	Headers map[string]string `json:"headers"`
	Body    any               `json:"body"`
	// Raw is the underlying request, for system handlers that need more
	// (streaming, cookies). It never crosses to agent code.
	Raw *http.Request `json:"-"`
}

// Response is what a handler returns. A string Body is sent as text; any
// other Body is sent as JSON. Status defaults to 200. A system handler may
// set Stream instead of Body to write the response itself.
type Response struct {
	Status  int                         `json:"status,omitempty"`
	Headers map[string]string           `json:"headers,omitempty"`
	Body    any                         `json:"body,omitempty"`
	Stream  func(w http.ResponseWriter) `json:"-"`
}

// JSON returns a 200 response with body v.
func JSON(v any) *Response { return &Response{Status: http.StatusOK, Body: v} }

// Kind classifies an error for clients; each kind has one status.
type Kind string

// Error kinds.
const (
	KindValidation Kind = "validation"
	KindAuth       Kind = "auth"
	KindForbidden  Kind = "forbidden"
	KindNotFound   Kind = "not_found"
	KindConflict   Kind = "conflict"
	KindTooLarge   Kind = "too_large"
	// KindTooMany refuses a request past a limit on how many of something
	// may run at once (event streams per credential, say); the message
	// names the limit. Retry once one has ended.
	KindTooMany Kind = "too_many"
	// KindUnavailable refuses what the kernel does not do in its current
	// mode (safe mode mounts no plugin); retry once it runs normally.
	KindUnavailable Kind = "unavailable"
	KindInternal    Kind = "internal"
)

// Status returns the HTTP status of the kind.
func (k Kind) Status() int {
	switch k {
	case KindValidation:
		return http.StatusBadRequest
	case KindAuth:
		return http.StatusUnauthorized
	case KindForbidden:
		return http.StatusForbidden
	case KindNotFound:
		return http.StatusNotFound
	case KindConflict:
		return http.StatusConflict
	case KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case KindTooMany:
		return http.StatusTooManyRequests
	case KindUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// Error is an error with a kind, for handlers to return.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

// NewError returns an *Error of the given kind with message msg.
func NewError(kind Kind, msg string) error { return &Error{Kind: kind, Message: msg} }

// KindOf returns the kind of err: an *Error's own kind, or one derived from
// a kernel error code; anything else is internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	switch kernel.CodeOf(err) {
	case kernel.CodeValidation, kernel.CodeUndeclaredKey, kernel.CodeUndeclaredPoint, kernel.CodeUnknownPoint:
		return KindValidation
	case kernel.CodeNotFound:
		return KindNotFound
	case kernel.CodeConflict, kernel.CodeReservedID, kernel.CodeLifecycle:
		return KindConflict
	case kernel.CodeTrust, kernel.CodeForbidden, kernel.CodeAuthorization, kernel.CodeCapability:
		return KindForbidden
	case kernel.CodeBudget:
		return KindTooMany
	case kernel.CodeUnavailable:
		return KindUnavailable
	}
	return KindInternal
}

// Scope is what a credential may do. Routes name the scope they need.
type Scope string

// The scopes.
const (
	// ScopeRead reads state, events, approvals, metrics and data.
	ScopeRead Scope = "read"
	// ScopeChat chats with the agent and submits plugins (which the judge
	// still gates).
	ScopeChat Scope = "chat"
	// ScopeApprove decides pending approvals.
	ScopeApprove Scope = "approve"
	// ScopeAdmin enables, disables and uninstalls agent plugins and writes data.
	ScopeAdmin Scope = "admin"
)

// Scopes lists every scope.
var Scopes = []Scope{ScopeRead, ScopeChat, ScopeApprove, ScopeAdmin}

// ParseScopes parses a comma-separated list of scope names, refusing an
// unknown or repeated one by name.
func ParseScopes(list string) ([]Scope, error) {
	var out []Scope
	for _, name := range strings.Split(list, ",") {
		s := Scope(strings.TrimSpace(name))
		if !slices.Contains(Scopes, s) {
			return nil, fmt.Errorf("unknown scope %q (want read, chat, approve or admin)", s)
		}
		if slices.Contains(out, s) {
			return nil, fmt.Errorf("scope %q listed twice", s)
		}
		out = append(out, s)
	}
	return out, nil
}

// Credential is a bearer token with a name and the scopes it grants.
type Credential struct {
	Name   string
	Token  string
	Scopes []Scope
}

// UserPrefix starts the name of every principal that stands for an
// application user (an auth plugin's "user:alice"); no credential's name
// may start with it, so none can pass for a user in chat sessions,
// approvals or audit records.
const UserPrefix = "user:"

// Principal is who a request comes from, as handlers and agent code see it:
// a name and scopes, never a secret. The zero Principal is anonymous.
type Principal struct {
	Authenticated bool    `json:"authenticated"`
	Name          string  `json:"name,omitempty"`
	Scopes        []Scope `json:"scopes,omitempty"`
	// UserID is the application user a session stands for (an auth
	// plugin's), zero for a bearer credential and for anonymous callers.
	UserID int64 `json:"userId,omitempty"`
}

// Has reports whether the principal holds scope.
func (p Principal) Has(scope Scope) bool { return slices.Contains(p.Scopes, scope) }

// Authenticator is an item of AuthenticatorPoint: it recognizes requests
// by something other than a configured bearer token (an auth plugin's
// sessions, say) and says who they come from. Authenticate answers an
// authenticated Principal for a request it recognizes, the zero one for a
// request it does not, and an error to refuse the request outright (a
// session cookie on a mutation without its CSRF header, say).
type Authenticator struct {
	Name         string
	Authenticate func(r *http.Request) (Principal, error)
}

// Options configure the http plugin.
type Options struct {
	// Credentials are the bearer tokens the kernel accepts. With none (and
	// no authenticator contributed) every route is open.
	Credentials []Credential
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries, or the anonymous one.
func PrincipalFrom(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

// DecodeBody decodes the request's JSON object body into v, refusing
// unknown fields: the error, a validation one, says the body must be
// shape (such as `{"login":"..."}`) and what was wrong.
func DecodeBody(r *Request, v any, shape string) error {
	obj, ok := r.Body.(map[string]any)
	if !ok {
		return NewError(KindValidation, "the body must be a JSON object: "+shape)
	}
	raw, err := json.Marshal(obj) // decoded from JSON, so it encodes again
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		err = dec.Decode(v)
	}
	if err != nil {
		return NewError(KindValidation, fmt.Sprintf("the body must be %s: %v", shape, err))
	}
	return nil
}
