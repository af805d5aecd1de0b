package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
)

// server is the Service: it serves the routing table.
type server struct {
	routes   *table
	logger   *slog.Logger
	creds    []credential
	finders  tokenFinders // the creds' tokens, to keep them from agent routes
	reserved *reservations

	mu    sync.RWMutex
	auths map[string]Authenticator // by contribution id
}

func (s *server) Routes() []RouteInfo { return s.routes.infos() }

func (s *server) authenticators() []Authenticator {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Authenticator, 0, len(s.auths))
	for _, a := range s.auths {
		out = append(out, a)
	}
	return out
}

// ServeHTTP serves every route.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.serve(w, r, true) }

// AppHandler implements Service: every route but the admin ones.
func (s *server) AppHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, false) })
}

func (s *server) serve(w http.ResponseWriter, r *http.Request, admin bool) {
	rt, params := s.routes.match(r.Method, r.URL.Path, s.reserved.covers, admin)
	if rt == nil {
		WriteError(w, NewError(KindNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path)))
		return
	}
	req := &Request{Method: r.Method, Path: r.URL.Path, Params: params, Query: firsts(r.URL.Query()),
		Headers: firsts(r.Header), Raw: r}
	who, err := s.authenticate(r)
	if err == nil {
		err = s.admit(rt, who, req)
	}
	if err != nil {
		WriteError(w, err)
		return
	}
	var raw []byte
	var body any
	if !rt.raw { // only system routes can set it
		raw, body, err = readBody(r)
	}
	if err == nil && !rt.system {
		err = s.finders.refuseTokens(r, raw, body)
	}
	if err != nil {
		WriteError(w, err)
		return
	}
	req.Body = body
	if !rt.system {
		req = s.forAgent(req)
	}
	resp, err := call(WithPrincipal(r.Context(), who), rt, req)
	if err == nil {
		err = writeResponse(w, resp)
	}
	if err != nil {
		if KindOf(err) == KindInternal {
			s.logger.Error("Route failed", "plugin", rt.plugin, "method", rt.method, "path", rt.path, "error", err)
			err = &routeError{plugin: rt.plugin, err: fmt.Errorf("route %s %s of plugin %s failed: %w", rt.method, rt.path, rt.plugin, err)}
		}
		WriteError(w, err)
	}
}

// call runs the handler; a panic becomes an internal error.
func call(ctx context.Context, rt *route, req *Request) (resp *Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return rt.handler(ctx, req)
}

// readBody reads at most MaxBodyBytes and decodes JSON bodies. It returns
// the body as read and as decoded.
func readBody(r *http.Request) ([]byte, any, error) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, nil, NewError(KindValidation, "read request body: "+err.Error())
	}
	if len(raw) > MaxBodyBytes {
		return nil, nil, NewError(KindTooLarge, fmt.Sprintf("request body exceeds %d bytes", MaxBodyBytes))
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw, nil, nil
	}
	ct := r.Header.Get("Content-Type")
	if ct != "" && !strings.Contains(ct, "json") {
		return raw, string(raw), nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, nil, NewError(KindValidation, "request body is not valid JSON: "+err.Error())
	}
	return raw, v, nil
}

func firsts(m map[string][]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if len(v) > 0 {
			out[strings.ToLower(k)] = v[0]
		}
	}
	return out
}

// writeResponse writes resp; a string body is text, anything else JSON.
func writeResponse(w http.ResponseWriter, resp *Response) error {
	if resp == nil {
		resp = &Response{}
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	if status < 100 || status > 599 {
		return fmt.Errorf("handler returned status %d", status)
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	if resp.Stream != nil {
		stream(w, resp.Stream)
		return nil
	}
	switch b := resp.Body.(type) {
	case nil:
		w.WriteHeader(status)
	case string:
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("encode response body: %w", err)
		}
		WriteJSON(w, status, json.RawMessage(raw))
	}
	return nil
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		WriteError(w, fmt.Errorf("encode response: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(raw, '\n'))
}

// errorBody is the wire form of every error.
type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Kind    Kind   `json:"kind"`
		// Plugin owns the route that failed, on a 500.
		Plugin string `json:"plugin,omitempty"`
	} `json:"error"`
}

// routeError is a route's internal failure, naming its plugin.
type routeError struct {
	plugin string
	err    error
}

func (e *routeError) Error() string { return e.err.Error() }
func (e *routeError) Unwrap() error { return e.err }

// WriteError writes err as {"error":{"message","kind"}} with its kind's status.
func WriteError(w http.ResponseWriter, err error) {
	var body errorBody
	body.Error.Kind = KindOf(err)
	body.Error.Message = err.Error()
	if re := (*routeError)(nil); errors.As(err, &re) {
		body.Error.Plugin = re.plugin
	}
	raw, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(body.Error.Kind.Status())
	_, _ = w.Write(append(raw, '\n'))
}
