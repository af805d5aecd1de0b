package adminv1

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// State returns the kernel's name, auth mode, fibers, pending approvals,
// routes, collections and taint flags.
func (c *Client) State(ctx context.Context) (State, error) {
	var s State
	err := c.do(ctx, call{method: http.MethodGet, path: RouteState}, &s)
	return s, err
}

// Submit sends an agent plugin to the judge and returns its verdict:
// mounted, pending (with an ApprovalID) or rejected (with Gate and
// Reason); all three are answers, not errors. A non-empty requestedBy is
// sent as RequestedByHeader. Resubmitting the same id and code is
// idempotent.
func (c *Client) Submit(ctx context.Context, p Plugin, requestedBy string) (Verdict, error) {
	rq := call{method: http.MethodPost, path: RoutePlugins, body: p}
	if requestedBy != "" {
		rq.header = http.Header{RequestedByHeader: {requestedBy}}
	}
	var v Verdict
	err := c.do(ctx, rq, &v)
	return v, err
}

// Enable enables the plugin id and returns its view after the kernel
// settled. A plugin whose activation failed is a view in the failed
// state, not an error.
func (c *Client) Enable(ctx context.Context, id string) (Fiber, error) {
	return c.toggle(ctx, Path(RoutePluginEnable, id))
}

// Disable disables the plugin id, and first every plugin that depends on
// it, and returns its view after the kernel settled.
func (c *Client) Disable(ctx context.Context, id string) (Fiber, error) {
	return c.toggle(ctx, Path(RoutePluginDisable, id))
}

func (c *Client) toggle(ctx context.Context, path string) (Fiber, error) {
	var v Fiber
	err := c.do(ctx, call{method: http.MethodPost, path: path}, &v)
	return v, err
}

// Uninstall removes the agent plugin id. A plugin that is not installed
// is not an error, so Uninstall may be repeated; a 404 that is not the
// kernel's own not_found answer (a proxy, a wrong base URL) still is.
// System plugins cannot be uninstalled (a 403 *Error).
func (c *Client) Uninstall(ctx context.Context, id string) error {
	return c.uninstall(ctx, id, nil)
}

// ForceUninstall removes the agent plugin id even while other enabled
// plugins inject a key it provides (Uninstall answers those with a 409
// naming them); the kernel is tainted forced_uninstall. System plugins
// still cannot be uninstalled.
func (c *Client) ForceUninstall(ctx context.Context, id string) error {
	return c.uninstall(ctx, id, url.Values{"force": {"true"}})
}

func (c *Client) uninstall(ctx context.Context, id string, query url.Values) error {
	err := c.do(ctx, call{method: http.MethodDelete, path: Path(RoutePlugin, id), query: query}, nil)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound && e.Kind == KindNotFound {
		return nil
	}
	return err
}

// Approve approves the pending approval approvalID on behalf of by (empty:
// the kernel names the caller). codeHash must be the approval's code hash
// (Approval.CodeHash); any other is a 409 (IsConflict), so nobody
// approves code they did not see. The kernel skips that check when no
// hash is sent, so an empty codeHash is refused here without a request.
func (c *Client) Approve(ctx context.Context, approvalID, by, codeHash string) (Verdict, error) {
	if codeHash == "" {
		return Verdict{}, fmt.Errorf("kernel admin api: approve %s: the approval's code hash is required", approvalID)
	}
	return c.decide(ctx, Path(RouteApprove, approvalID), Decision{By: by, CodeHash: codeHash})
}

// ApproveAs approves like Approve, relaying the groups of who approves
// (the client needs the admin scope): a kernel that names approver groups
// counts an approval only from one of them.
func (c *Client) ApproveAs(ctx context.Context, approvalID string, d Decision) (Verdict, error) {
	if d.CodeHash == "" {
		return Verdict{}, fmt.Errorf("kernel admin api: approve %s: the approval's code hash is required", approvalID)
	}
	return c.decide(ctx, Path(RouteApprove, approvalID), d)
}

// Reject rejects the pending approval approvalID, bound to codeHash like
// Approve.
func (c *Client) Reject(ctx context.Context, approvalID, by, codeHash string) (Verdict, error) {
	return c.decide(ctx, Path(RouteReject, approvalID), Decision{By: by, CodeHash: codeHash})
}

func (c *Client) decide(ctx context.Context, path string, d Decision) (Verdict, error) {
	var v Verdict
	err := c.do(ctx, call{method: http.MethodPost, path: path, body: d}, &v)
	return v, err
}

// Events returns the event log after sequence number after, at most limit
// events (the kernel allows 1 to 1000; limit <= 0 means its default,
// 100). Page on by passing the last event's Seq as the next after; an
// empty page means the reader is caught up.
func (c *Client) Events(ctx context.Context, after int64, limit int) ([]Event, error) {
	if after < 0 {
		return nil, fmt.Errorf("kernel admin api: events: after is %d, want a non-negative sequence number", after)
	}
	q := url.Values{"after": {strconv.FormatInt(after, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var page EventPage
	err := c.do(ctx, call{method: http.MethodGet, path: RouteEvents, query: q}, &page)
	return page.Events, err
}

// Healthy returns nil when the kernel answers GET /readyz with 200, and
// otherwise an error saying why (a 503 *Error carries the kernel's cause).
func (c *Client) Healthy(ctx context.Context) error {
	_, err := c.send(ctx, call{method: http.MethodGet, path: RouteReadyz})
	return err
}

// Plugin returns the installed agent plugin id: its manifest, code and
// whether it is enabled. A plugin that is not installed is a 404
// (IsNotFound).
func (c *Client) Plugin(ctx context.Context, id string) (Installed, error) {
	var p Installed
	err := c.do(ctx, call{method: http.MethodGet, path: Path(RoutePlugin, id)}, &p)
	return p, err
}

// Path is route with its ":id" replaced by id, escaped, so an id can
// never address another route.
func Path(route, id string) string {
	return strings.Replace(route, ":id", url.PathEscape(id), 1)
}

// PluginStatus returns one plugin's fiber and pending approvals, read
// from the kernel's memory. An id the kernel neither runs nor holds is a
// 404 (IsNotFound).
func (c *Client) PluginStatus(ctx context.Context, id string) (PluginStatus, error) {
	var s PluginStatus
	err := c.do(ctx, call{method: http.MethodGet, path: Path(RoutePluginStatus, id)}, &s)
	return s, err
}
