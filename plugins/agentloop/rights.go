package agentloop

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// The agent acts as its user: a built-in tool needs the scope the admin
// API's equivalent route needs, read from the principal the turn's context
// carries (the chat request's credential). A turn without an authenticated
// principal (an admin API without credentials, or a Go caller) may use
// every tool, as such a caller may use every route.
//
// Disabling and enabling are the exception the chat agent keeps: a caller
// without the admin scope may disable an agent plugin and enable it again,
// but its disables are reversible (kernel.DisableReversibly) and it cannot
// undo a disable that holds (an admin's): enabling, uninstalling or
// defining anew a held plugin needs the admin scope.
var toolScopes = map[string]smshttp.Scope{
	toolDefine:  smshttp.ScopeChat,
	toolList:    smshttp.ScopeRead,
	toolDisable: smshttp.ScopeChat,
	toolEnable:  smshttp.ScopeChat,
	toolRemove:  smshttp.ScopeChat,
}

// caller is who a turn acts for.
type caller struct{ smshttp.Principal }

func callerOf(ctx context.Context) caller { return caller{smshttp.PrincipalFrom(ctx)} }

// has reports whether the caller holds scope; an anonymous caller came
// through an open API (or from Go) and holds every scope.
func (c caller) has(scope smshttp.Scope) bool { return !c.Authenticated || c.Has(scope) }

// requester names the caller to the judge: the credential's name, as the
// admin API names its callers, so one chat user's pending approvals and
// sandbox units count against their own bounds, not everyone's; Requester
// for an anonymous caller, or a name the judge would not record.
func (c caller) requester() string {
	if !c.Authenticated || judge.ValidateDecider(c.Name) != nil {
		return Requester
	}
	return c.Name
}

// allow refuses a tool call the caller's scopes do not cover.
func (c caller) allow(tool string) error {
	if scope, ok := toolScopes[tool]; ok && !c.has(scope) {
		return &kernel.Error{Code: kernel.CodeForbidden, Op: tool, Fiber: PluginID,
			Message: fmt.Sprintf("%s needs the %s scope, which credential %s does not hold", tool, scope, c.Name)}
	}
	return nil
}

// allowHeld refuses what would undo an admin's disable of id (enabling
// it, uninstalling or defining it anew) unless the caller holds admin.
func (s *service) allowHeld(c caller, tool, id string) error {
	if c.has(smshttp.ScopeAdmin) {
		return nil
	}
	if v, ok := s.k.Fiber(id); ok && v.Held {
		return &kernel.Error{Code: kernel.CodeForbidden, Op: tool, Fiber: id, Message: fmt.Sprintf(
			"%s was disabled by an admin: %s needs the admin scope, which credential %s does not hold", id, tool, c.Name)}
	}
	return nil
}
