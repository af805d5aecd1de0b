package http

import (
	"context"
	"errors"
	"net/http"

	"github.com/sms-baseline/sms/kernel"
)

// Key is the key whose value is the Service.
const Key = "http"

// RoutePoint is the point routes are contributed to.
const RoutePoint = "route"

// MaxBodyBytes is the largest request body a route receives.
const MaxBodyBytes = 1 << 20

// Service is the value of Key: the handler that serves every route.
type Service interface {
	http.Handler
	// Routes lists the routes being served, in contribution order.
	Routes() []RouteInfo
}

// RouteInfo describes a served route.
type RouteInfo struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Plugin string `json:"plugin"`
}

// Route is a route contributed by a system plugin.
type Route struct {
	Method  string
	Path    string
	Handler Handler
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
	KindInternal   Kind = "internal"
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

// Errorf returns an *Error of the given kind.
func Errorf(kind Kind, msg string) error { return &Error{Kind: kind, Message: msg} }

// KindOf returns the kind of err: an *Error's own kind, or one derived from
// a kernel error code; anything else is internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	switch kernel.CodeOf(err) {
	case kernel.CodeValidation, kernel.CodeUndeclaredKey, kernel.CodeUnknownPoint:
		return KindValidation
	case kernel.CodeNotFound:
		return KindNotFound
	case kernel.CodeConflict, kernel.CodeReservedID, kernel.CodeLifecycle:
		return KindConflict
	case kernel.CodeTrust, kernel.CodeForbidden, kernel.CodeAuthorization:
		return KindForbidden
	}
	return KindInternal
}
