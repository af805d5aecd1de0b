package adminv1

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// Version is the admin API version this package speaks. The kernel names
// the version it serves in VersionHeader on every successful answer.
const Version = "v1"

// Headers of the admin API.
const (
	// VersionHeader carries the admin API version of the kernel's answer.
	VersionHeader = "X-Sms-Admin-Api-Version"
	// RequestedByHeader names, on a token-protected kernel, on whose
	// behalf a credential with the admin scope submits; the kernel records
	// it as the approval's RequestedBy. Other credentials are recorded by
	// their own name, and an open kernel ignores it.
	RequestedByHeader = "X-Requested-By"
)

// Routes of the admin API; ":id" stands for an escaped plugin or approval
// id.
const (
	RouteState          = "/api/state"
	RouteCatalog        = "/api/catalog"
	RoutePlugins        = "/api/plugins"
	RoutePlugin         = "/api/plugins/:id"
	RoutePluginStatus   = "/api/plugins/:id/status"
	RoutePluginVersions = "/api/plugins/:id/versions"
	RoutePluginVersion  = "/api/plugins/:id/versions/:hash"
	RoutePluginEnable   = "/api/plugins/:id/enable"
	RoutePluginDisable  = "/api/plugins/:id/disable"
	// RoutePluginTransition is a plugin's latest transition between
	// versions; POST RouteTransitionAbort aborts it while it is open.
	RoutePluginTransition = "/api/plugins/:id/transition"
	RouteTransitionAbort  = "/api/plugins/:id/transition/abort"
	RouteTransitions      = "/api/transitions"
	// RouteBudget is the tenant's budget and its use this period.
	RouteBudget      = "/api/budget"
	RouteApprovals   = "/api/approvals"
	RouteApprove     = "/api/approvals/:id/approve"
	RouteReject      = "/api/approvals/:id/reject"
	RouteChat        = "/api/chat"
	RouteChatStream  = "/api/chat/stream"
	RouteEvents      = "/api/events"
	RouteEventStream = "/api/events/stream"
	RouteHealthz     = "/healthz"
	RouteReadyz      = "/readyz"
	RouteMetrics     = "/metrics"
)

// Status is the outcome in a Verdict.
type Status string

// Statuses of a Verdict.
const (
	StatusMounted  Status = "mounted"
	StatusPending  Status = "pending"
	StatusRejected Status = "rejected"
)

// The gates and steps a Verdict's Gate names, in the order they run.
const (
	GateManifest  = "manifest"
	GateTrust     = "trust"
	GateLint      = "lint"
	GateLoad      = "load"
	GatePolicy    = "policy"
	GateApproval  = "approval"
	GateMount     = "mount"
	GateInvariant = "invariant"
)

// DefaultMaxPendingPerRequester is how many approvals one requester has
// waiting at once under the kernel's default policy.
const DefaultMaxPendingPerRequester = 8

// FiberState is a plugin's lifecycle state in a Fiber.
type FiberState string

// Fiber states. A fiber moves inactive -> loading -> active -> unloading
// -> inactive, or loading -> failed when activation fails.
const (
	StateInactive  FiberState = "inactive"
	StateLoading   FiberState = "loading"
	StateActive    FiberState = "active"
	StateUnloading FiberState = "unloading"
	StateFailed    FiberState = "failed"
)

// Trust is a plugin's trust tier.
type Trust string

// Trust tiers.
const (
	TrustAgent  Trust = "agent"
	TrustSystem Trust = "system"
)

// String returns the tier's name.
func (t Trust) String() string { return string(t) }

// Types of a ChatEvent.
const (
	ChatTextDelta = "text_delta"
	// ChatThinkingDelta is the model's reasoning, where its driver shows
	// it; it is not part of the reply.
	ChatThinkingDelta = "thinking_delta"
	ChatToolCall      = "tool_call"
	ChatToolResult    = "tool_result"
	ChatVerdict       = "verdict"
	// ChatHalted says the tenant's budget stopped the turn (Halt says why).
	ChatHalted = "halted"
	ChatDone   = "done"
	ChatError  = "error"
)

// Event types of the judge in the event log.
const (
	EventSubmitted  = "judge/submitted"
	EventRejected   = "judge/rejected"
	EventPending    = "judge/pending"
	EventApproved   = "judge/approved"
	EventDenied     = "judge/denied"
	EventSuperseded = "judge/superseded"
	EventMounted    = "judge/mounted"
	EventRolledBack = "judge/rolled_back"
)

// Points a manifest names that the operator renders specially.
const (
	// RoutePoint is the point of HTTP routes.
	RoutePoint = "route"
	// SchedulePoint is the point of scheduled jobs.
	SchedulePoint = "schedule"
)

// Kinds of an ErrorDetail; each has one status.
const (
	KindValidation = "validation"
	KindAuth       = "auth"
	KindForbidden  = "forbidden"
	KindNotFound   = "not_found"
	KindConflict   = "conflict"
	KindTooLarge   = "too_large"
	KindTooMany    = "too_many"
	// KindUnavailable: the kernel does not do this in its current mode
	// (safe mode mounts no plugin), a 503; retry once it runs normally.
	KindUnavailable = "unavailable"
	KindInternal    = "internal"
)

// HashCode is the hash the kernel binds code to: "sha256:" and the hex
// SHA-256 of the code.
func HashCode(code []byte) string {
	sum := sha256.Sum256(code)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DeclaredPoints are the points m declares: those in Points and those it
// contributes items to, sorted, each once.
func (m *Manifest) DeclaredPoints() []string {
	out := slices.Clone(m.Points)
	for p := range m.Contributes {
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
