package adminv1

import (
	"context"
	"net/http"
	"time"
)

// Transition phases.
const (
	PhaseTransitioning = "transitioning"
	PhaseComplete      = "complete"
	PhaseAborted       = "aborted"
)

// Transition is a plugin's latest move from one version to another: open
// (transitioning) from the proposal of the new version until it is
// committed and every call that started on the old version has ended
// (complete), or until the new version is aborted (aborted).
type Transition struct {
	Plugin      string    `json:"plugin"`
	FromVersion string    `json:"fromVersion"`
	From        string    `json:"from"`
	ToVersion   string    `json:"toVersion"`
	To          string    `json:"to"`
	Phase       string    `json:"phase"`
	Began       time.Time `json:"began"`
	Ended       time.Time `json:"ended,omitzero"`
	// Switched is set once the new version takes new work, and Committed
	// once it is in the log.
	Switched  bool `json:"switched"`
	Committed bool `json:"committed"`
	// Draining counts the replaced activations still answering calls
	// that started on them, and InFlight those calls.
	Draining int    `json:"draining"`
	InFlight int    `json:"inFlight"`
	Reason   string `json:"reason,omitempty"`
}

// Transitions is the answer of GET RouteTransitions: every plugin's latest
// transition, open ones first, then the newest.
type Transitions struct {
	Transitions []Transition `json:"transitions"`
}

// Transitions lists every plugin's latest transition.
func (c *Client) Transitions(ctx context.Context) ([]Transition, error) {
	var out Transitions
	err := c.do(ctx, call{method: http.MethodGet, path: RouteTransitions}, &out)
	return out.Transitions, err
}

// Transition returns the latest transition of plugin id (a 404 *Error
// when it never had one).
func (c *Client) Transition(ctx context.Context, id string) (Transition, error) {
	var out Transition
	err := c.do(ctx, call{method: http.MethodGet, path: Path(RoutePluginTransition, id)}, &out)
	return out, err
}

// AbortTransition aborts the open transition of plugin id: its staged new
// version is aborted and the version it replaced takes new work again.
// A transition whose new version is committed, or none open, is a 409
// *Error.
func (c *Client) AbortTransition(ctx context.Context, id string) (Transition, error) {
	var out Transition
	err := c.do(ctx, call{method: http.MethodPost, path: Path(RouteTransitionAbort, id)}, &out)
	return out, err
}
