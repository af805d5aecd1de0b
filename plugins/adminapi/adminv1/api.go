package adminv1

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// State is the kernel's state as GET /api/state reports it.
type State struct {
	// Kernel is the kernel's name.
	Kernel string
	// Auth is "token" when mutating routes need the admin token, "open"
	// otherwise.
	Auth string
	// Fibers are the installed plugins, system and agent.
	Fibers []kernel.FiberView
	// Pending are the approvals waiting for a human.
	Pending []judge.Approval
	// Taint holds the taint flags this client knows by name.
	Taint kernel.TaintSet
	// TaintNames are the taint flags exactly as the kernel named them,
	// including any a newer kernel has and this client does not know.
	TaintNames []string
}

// Auth modes of State.Auth.
const (
	AuthToken = "token"
	AuthOpen  = "open"
)

// stateWire is the JSON of GET /api/state. kernel.TaintSet encodes as a
// list of names and has no decoder, so the names are decoded here.
type stateWire struct {
	Kernel  string             `json:"kernel"`
	Auth    string             `json:"auth"`
	Fibers  []kernel.FiberView `json:"fibers"`
	Pending []judge.Approval   `json:"pending"`
	Taint   []string           `json:"taint"`
}

// State returns the kernel's name, auth mode, fibers, pending approvals
// and taint flags.
func (c *Client) State(ctx context.Context) (State, error) {
	var w stateWire
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/state"}, &w); err != nil {
		return State{}, err
	}
	return State{Kernel: w.Kernel, Auth: w.Auth, Fibers: w.Fibers, Pending: w.Pending,
		Taint: taintSet(w.Taint), TaintNames: w.Taint}, nil
}

// taintSet maps flag names to the flags this build of the kernel package
// knows; unknown names stay only in State.TaintNames.
func taintSet(names []string) kernel.TaintSet {
	var s kernel.TaintSet
	for _, name := range names {
		for bit := range 32 {
			flag := kernel.TaintSet(1 << bit)
			if known := flag.Names(); len(known) == 1 && known[0] == name {
				s |= flag
				break
			}
		}
	}
	return s
}

// Submit sends an agent plugin to the judge and returns its verdict:
// mounted, pending (with an ApprovalID) or rejected (with Gate and
// Reason); all three are answers, not errors. A non-empty requestedBy is
// sent as RequestedByHeader. Resubmitting the same id and code is
// idempotent.
func (c *Client) Submit(ctx context.Context, p judge.Plugin, requestedBy string) (judge.Verdict, error) {
	rq := call{method: http.MethodPost, path: "/api/plugins", body: p}
	if requestedBy != "" {
		rq.header = http.Header{RequestedByHeader: {requestedBy}}
	}
	var v judge.Verdict
	err := c.do(ctx, rq, &v)
	return v, err
}

// Enable enables the plugin id and returns its view after the kernel
// settled. A plugin whose activation failed is a view in the failed
// state, not an error.
func (c *Client) Enable(ctx context.Context, id string) (kernel.FiberView, error) {
	return c.toggle(ctx, id, "enable")
}

// Disable disables the plugin id, and first every plugin that depends on
// it, and returns its view after the kernel settled.
func (c *Client) Disable(ctx context.Context, id string) (kernel.FiberView, error) {
	return c.toggle(ctx, id, "disable")
}

func (c *Client) toggle(ctx context.Context, id, op string) (kernel.FiberView, error) {
	var v kernel.FiberView
	err := c.do(ctx, call{method: http.MethodPost, path: pluginPath(id) + "/" + op}, &v)
	return v, err
}

// Uninstall removes the agent plugin id. A plugin that is not installed
// is not an error, so Uninstall may be repeated; a 404 that is not the
// kernel's own not_found answer (a proxy, a wrong base URL) still is.
// System plugins cannot be uninstalled (a 403 *Error).
func (c *Client) Uninstall(ctx context.Context, id string) error {
	err := c.do(ctx, call{method: http.MethodDelete, path: pluginPath(id)}, nil)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound && e.Kind == kindNotFound {
		return nil
	}
	return err
}

// kindNotFound is the kind of the kernel's 404 answers.
const kindNotFound = "not_found"

// Approve approves the pending approval approvalID on behalf of by (empty:
// the kernel names the caller). codeHash must be the approval's code hash
// (judge.Approval.CodeHash); any other is a 409 (IsConflict), so nobody
// approves code they did not see. The kernel skips that check when no
// hash is sent, so an empty codeHash is refused here without a request.
func (c *Client) Approve(ctx context.Context, approvalID, by, codeHash string) (judge.Verdict, error) {
	if codeHash == "" {
		return judge.Verdict{}, fmt.Errorf("kernel admin api: approve %s: the approval's code hash is required", approvalID)
	}
	return c.decide(ctx, approvalID, "approve", decision{By: by, CodeHash: codeHash})
}

// Reject rejects the pending approval approvalID, bound to codeHash like
// Approve.
func (c *Client) Reject(ctx context.Context, approvalID, by, codeHash string) (judge.Verdict, error) {
	return c.decide(ctx, approvalID, "reject", decision{By: by, CodeHash: codeHash})
}

// decision is the body of approve and reject.
type decision struct {
	By       string `json:"by"`
	CodeHash string `json:"codeHash"`
}

func (c *Client) decide(ctx context.Context, approvalID, op string, d decision) (judge.Verdict, error) {
	var v judge.Verdict
	path := "/api/approvals/" + url.PathEscape(approvalID) + "/" + op
	err := c.do(ctx, call{method: http.MethodPost, path: path, body: d}, &v)
	return v, err
}

// Events returns the event log after sequence number after, at most limit
// events (the kernel allows 1 to 1000; limit <= 0 means its default,
// 100). Page on by passing the last event's Seq as the next after; an
// empty page means the reader is caught up.
func (c *Client) Events(ctx context.Context, after int64, limit int) ([]kernel.Event, error) {
	if after < 0 {
		return nil, fmt.Errorf("kernel admin api: events: after is %d, want a non-negative sequence number", after)
	}
	q := url.Values{"after": {strconv.FormatInt(after, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var page struct {
		Events []kernel.Event `json:"events"`
	}
	err := c.do(ctx, call{method: http.MethodGet, path: "/api/events", query: q}, &page)
	return page.Events, err
}

// Healthy returns nil when the kernel answers GET /readyz with 200, and
// otherwise an error saying why (a 503 *Error carries the kernel's cause).
func (c *Client) Healthy(ctx context.Context) error {
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/readyz"})
	return err
}

// Installed is an installed agent plugin as the kernel restores it: the
// answer of GET /api/plugins/{id}, so it can be exported (to git, or as a
// Plugin object) and submitted again.
type Installed struct {
	Manifest kernel.Manifest `json:"manifest"`
	Code     string          `json:"code"`
	CodeHash string          `json:"codeHash"`
	Enabled  bool            `json:"enabled"`
}

// Plugin returns the installed agent plugin id: its manifest, code and
// whether it is enabled. A plugin that is not installed is a 404
// (IsNotFound).
func (c *Client) Plugin(ctx context.Context, id string) (Installed, error) {
	var p Installed
	err := c.do(ctx, call{method: http.MethodGet, path: pluginPath(id)}, &p)
	return p, err
}

// pluginPath is the path of plugin id, escaped.
func pluginPath(id string) string { return "/api/plugins/" + url.PathEscape(id) }

// PluginStatus is what the kernel runs of one plugin and what of it waits
// for a human, as GET /api/plugins/{id}/status reports it from memory (no
// log fold), so a controller can check one plugin cheaply.
type PluginStatus struct {
	// Fiber is the installed plugin; nil when none is.
	Fiber *kernel.FiberView `json:"fiber"`
	// Pending are its submissions waiting for a decision.
	Pending []judge.Approval `json:"pending"`
}

// PluginStatus returns one plugin's fiber and pending approvals, read
// from the kernel's memory. An id the kernel neither runs nor holds is a
// 404 (IsNotFound).
func (c *Client) PluginStatus(ctx context.Context, id string) (PluginStatus, error) {
	var s PluginStatus
	err := c.do(ctx, call{method: http.MethodGet, path: pluginPath(id) + "/status"}, &s)
	return s, err
}
