package http

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/sms-baseline/sms/kernel"
)

// route is one entry of the routing table.
type route struct {
	id      string // the contribution's id
	plugin  string
	system  bool // contributed by a system plugin
	method  string
	path    string
	parts   []string // pattern segments; ":name" is a parameter
	handler Handler
	scope   Scope
	public  func(*Request) bool
	admin   bool
	users   bool
	raw     bool // RawBody
}

// table is the routing table. Reads (requests) and writes (contributions)
// may run concurrently.
type table struct {
	mu     sync.RWMutex
	routes []*route
}

// parseItem turns a contributed item into a route: a Route or *Route from a
// system plugin, or the JSON shape {method, path, handler} from an agent
// plugin, whose handler arrived as a kernel.Func.
func parseItem(item any) (*route, error) {
	var method, path string
	var h Handler
	var sys *Route
	switch it := item.(type) {
	case Route:
		sys = &it
	case *Route:
		sys = it
	case map[string]any:
		method, _ = it["method"].(string)
		path, _ = it["path"].(string)
		fn, ok := it["handler"].(kernel.Func)
		if !ok {
			return nil, fmt.Errorf("route handler must be a function")
		}
		h = agentHandler(fn)
	default:
		return nil, fmt.Errorf("a route is {method, path, handler}, got %T", item)
	}
	if sys != nil {
		method, path, h = sys.Method, sys.Path, sys.Handler
	}
	if h == nil {
		return nil, fmt.Errorf("route %s %s has no handler", method, path)
	}
	method = strings.ToUpper(method)
	if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, method) {
		return nil, fmt.Errorf("route method %q must be one of GET, POST, PUT, PATCH, DELETE", method)
	}
	parts, err := parsePattern(path)
	if err != nil {
		return nil, err
	}
	r := &route{method: method, path: path, parts: parts, handler: h}
	if sys != nil {
		r.scope, r.public, r.admin, r.users, r.raw = sys.Scope, sys.Public, sys.Admin, sys.Users, sys.RawBody
	}
	return r, nil
}

func parsePattern(path string) ([]string, error) {
	if !strings.HasPrefix(path, "/") || len(path) > 512 {
		return nil, fmt.Errorf("route path %q must start with / and be at most 512 characters", path)
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	seen := map[string]bool{}
	for _, p := range parts {
		if p == "" && path != "/" {
			return nil, fmt.Errorf("route path %q has an empty segment", path)
		}
		if name, ok := strings.CutPrefix(p, ":"); ok {
			if name == "" || seen[name] {
				return nil, fmt.Errorf("route path %q has an empty or repeated parameter", path)
			}
			seen[name] = true
		}
	}
	return parts, nil
}

// shape is the pattern with parameter names erased: two routes with the
// same method and shape would serve the same requests.
func (r *route) shape() string {
	parts := slices.Clone(r.parts)
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = ":"
		}
	}
	return r.method + " /" + strings.Join(parts, "/")
}

// conflict returns the route already serving r's method and shape.
func (t *table) conflict(r *route) *route {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, x := range t.routes {
		if x.shape() == r.shape() {
			return x
		}
	}
	return nil
}

func (t *table) add(r *route) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.routes = append(t.routes, r)
}

func (t *table) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.routes = slices.DeleteFunc(t.routes, func(r *route) bool { return r.id == id })
}

// match finds the route for method and path: the most specific system
// route if one matches, else, outside the reserved prefixes, the most
// specific agent route (at the first segment where two candidates differ,
// a literal beats a parameter). System routes win every match, so no agent
// route can shadow one, whatever its pattern. Admin routes are skipped
// when admin is false.
func (t *table) match(method, path string, reserved func([]string) bool, admin bool) (*route, map[string]string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	t.mu.RLock()
	defer t.mu.RUnlock()
	best := t.best(method, segs, admin, true)
	if best == nil && !reserved(segs) {
		best = t.best(method, segs, admin, false)
	}
	if best == nil {
		return nil, nil
	}
	params := map[string]string{}
	for i, p := range best.parts {
		if name, ok := strings.CutPrefix(p, ":"); ok {
			params[name] = segs[i]
		}
	}
	return best, params
}

// best returns the most specific route of one tier matching segs; the
// caller holds t.mu.
func (t *table) best(method string, segs []string, admin, system bool) *route {
	var best *route
	for _, r := range t.routes {
		if r.system == system && (admin || !r.admin) && r.method == method && r.matches(segs) &&
			(best == nil || r.moreSpecific(best)) {
			best = r
		}
	}
	return best
}

func (r *route) matches(segs []string) bool {
	if len(segs) != len(r.parts) {
		return false
	}
	for i, p := range r.parts {
		if !strings.HasPrefix(p, ":") && p != segs[i] {
			return false
		}
	}
	return true
}

func (r *route) moreSpecific(o *route) bool {
	for i := range r.parts {
		rl, ol := !strings.HasPrefix(r.parts[i], ":"), !strings.HasPrefix(o.parts[i], ":")
		if rl != ol {
			return rl
		}
	}
	return false
}

func (t *table) infos() []RouteInfo {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]RouteInfo, 0, len(t.routes))
	for _, r := range t.routes {
		out = append(out, RouteInfo{Method: r.method, Path: r.path, Plugin: r.plugin, Scope: r.scope})
	}
	return out
}

// agentHandler adapts an agent plugin's function to a Handler: the request
// crosses as a JSON snapshot (the server has already taken every
// credential out of it) and the result is read as {status, headers, body}.
func agentHandler(fn kernel.Func) Handler {
	return func(ctx context.Context, r *Request) (*Response, error) {
		out, err := fn(ctx, r)
		if err != nil {
			return nil, err
		}
		m, ok := out.(map[string]any)
		if !ok {
			return &Response{Status: http.StatusOK, Body: out}, nil
		}
		resp := &Response{Body: m["body"]}
		if s, ok := m["status"].(float64); ok {
			resp.Status = int(s)
		}
		resp.Headers = map[string]string{}
		if h, ok := m["headers"].(map[string]any); ok {
			for k, v := range h {
				k = http.CanonicalHeaderKey(k)
				if !slices.Contains(agentHeadersRefused, k) {
					resp.Headers[k] = fmt.Sprint(v)
				}
			}
		}
		maps.Copy(resp.Headers, AgentHeaders)
		return resp, nil
	}
}

// AgentHeaders are set on every answer of an agent route, over the
// agent's own. An agent's page shares the kernel's origin with the
// console and the admin API, so it runs sandboxed in an origin of its
// own: its scripts run, but cannot read the console's storage or call
// the kernel with the caller's session.
var AgentHeaders = map[string]string{
	"Content-Security-Policy": "sandbox allow-scripts allow-forms allow-popups allow-downloads",
	"X-Content-Type-Options":  "nosniff",
}

// agentHeadersRefused are the headers an agent route may not set: the two
// above, and cookies (an agent never sees the caller's cookies, and may
// not replace the session's).
var agentHeadersRefused = []string{"Content-Security-Policy", "Content-Security-Policy-Report-Only", "X-Content-Type-Options", "Set-Cookie"}
