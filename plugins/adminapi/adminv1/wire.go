package adminv1

import (
	"encoding/json"
	"time"
)

// State is the answer of GET /api/state.
type State struct {
	// Kernel is the kernel's name.
	Kernel string `json:"kernel"`
	// Auth is AuthToken when routes need a credential, AuthOpen otherwise.
	Auth string `json:"auth"`
	// Users reports whether the kernel has application users (its auth
	// plugin is active): then the data routes act for each user under
	// access control. Without users, local development's mode, the data is
	// open to whoever the credentials admit.
	Users bool `json:"users"`
	// Fibers are the installed plugins, system and agent.
	Fibers []Fiber `json:"fibers"`
	// Plugins is an alias of Fibers, the same list under the name the
	// seed's API gives it, for clients written against that API.
	Plugins []Fiber `json:"plugins"`
	// Pending are the approvals waiting for a human.
	Pending []Approval `json:"pending"`
	// Routes are the routes the kernel serves.
	Routes []Route `json:"routes"`
	// Collections are the collections defined; empty when the kernel runs
	// no collections plugin.
	Collections []Collection `json:"collections"`
	// Taint names the taint flags set since boot.
	Taint []string `json:"taint"`
	// SafeMode: the kernel booted with system plugins only (manager
	// kernel --safe-mode); agent plugins are listed, inactive, and none
	// can be mounted until it restarts without it.
	SafeMode bool `json:"safeMode,omitempty"`
}

// Auth modes of State.Auth.
const (
	AuthToken = "token"
	AuthOpen  = "open"
)

// Dependency is one key a plugin declares and whether it is provided.
type Dependency struct {
	Key     string `json:"key"`
	Present bool   `json:"present"`
}

// Fiber is one installed plugin as the kernel runs it.
type Fiber struct {
	ID          string     `json:"id"`
	Version     string     `json:"version"`
	Description string     `json:"description,omitempty"`
	Trust       Trust      `json:"trust"`
	Enabled     bool       `json:"enabled"`
	State       FiberState `json:"state"`
	Error       string     `json:"error,omitempty"`
	CodeHash    string     `json:"codeHash,omitempty"`
	// Staged is set while a mount is not yet committed to the log.
	Staged bool `json:"staged,omitempty"`
	// Points are the points the plugin declares.
	Points   []string     `json:"points,omitempty"`
	Inject   []Dependency `json:"inject"`
	Optional []Dependency `json:"optional"`
	Provides []string     `json:"provides"`
	Scopes   []string     `json:"scopes,omitempty"`
	Effects  int          `json:"effects"`
	// Held is set on a plugin an admin disabled: only an admin enables it.
	Held bool `json:"held,omitempty"`
	// RequestedBy is who asked for an agent plugin's installed version: a
	// credential's name or user:<login>. Its jobs and hooks act as them.
	RequestedBy string `json:"requestedBy,omitempty"`
	// Quarantine says why the kernel quarantined the plugin (its sandbox
	// stopped, or its activations kept failing). It is disabled and held
	// until an admin enables it.
	Quarantine string `json:"quarantine,omitempty"`
	// SafeMode is set on an agent plugin the kernel keeps inactive because
	// it runs in safe mode.
	SafeMode bool `json:"safeMode,omitempty"`
	// Capabilities is the plugin's capability set: derived from its
	// declaration when it was proposed, checked on every call; ["*"] for a
	// system plugin (every capability).
	Capabilities []string `json:"capabilities,omitempty"`
}

// Manifest is a plugin's declaration: its id, version, keys, scopes and
// the points it contributes to.
type Manifest struct {
	ID          string   `json:"id"`
	Version     string   `json:"version"`
	Description string   `json:"description,omitempty"`
	Inject      []string `json:"inject,omitempty"`
	Optional    []string `json:"optional,omitempty"`
	Provide     []string `json:"provide,omitempty"`
	Scopes      []string `json:"scopes,omitempty"`
	// Points lists the points the plugin's code may contribute to.
	Points []string `json:"points,omitempty"`
	// Contributes holds declarative items per point.
	Contributes map[string][]any `json:"contributes,omitempty"`
}

// Plugin is an agent plugin as submitted: the body of POST /api/plugins.
type Plugin struct {
	Manifest Manifest `json:"manifest"`
	Code     string   `json:"code"`
}

// Verdict is the judge's answer to a submission or a decision. Gate names
// the gate or step that decided.
type Verdict struct {
	Status     Status `json:"status"`
	PluginID   string `json:"pluginId"`
	Version    string `json:"version"`
	CodeHash   string `json:"codeHash"`
	Gate       string `json:"gate"`
	Reason     string `json:"reason,omitempty"`
	ApprovalID string `json:"approvalId,omitempty"`
	// RolledBack is set when a mount was undone; Restored names the
	// version put back.
	RolledBack bool   `json:"rolledBack,omitempty"`
	Restored   string `json:"restored,omitempty"`
	// Retry is set on a rejection for want of capacity: the same
	// submission may pass later.
	Retry bool `json:"retry,omitempty"`
}

// Approval is a submission waiting for a human, bound to its code hash.
type Approval struct {
	ID          string    `json:"id"`
	PluginID    string    `json:"pluginId"`
	Version     string    `json:"version"`
	CodeHash    string    `json:"codeHash"`
	Manifest    Manifest  `json:"manifest"`
	Code        string    `json:"code"`
	RequestedBy string    `json:"requestedBy"`
	Reasons     []string  `json:"reasons"`
	Requested   time.Time `json:"requested"`
	// Capabilities is the plugin's capability set, derived from its
	// declaration; Grant what its requester may give a plugin (null on an
	// approval parked before grants were recorded). Approving mounts it
	// with those capabilities, judged against that grant.
	Capabilities []string `json:"capabilities,omitempty"`
	Grant        []string `json:"grant"`
	// Declaration is what Manifest declares, as a person reviews it
	// (DeclarationOf).
	Declaration Declaration `json:"declaration,omitzero"`
	// Decisions are the approvals given so far, when the kernel needs
	// several approvers.
	Decisions []ApprovalDecision `json:"decisions,omitempty"`
	// Replaces is the committed version this plugin would replace, and
	// what changes from it; nil for a new plugin.
	Replaces *Replaced `json:"replaces,omitempty"`
	// Object is where the operator asks a human about it, on a kernel
	// that runs for a Tenant (started with --tenant); nil otherwise.
	Object *ApprovalObject `json:"object,omitempty"`
}

// Approvals is the answer of GET /api/approvals.
type Approvals struct {
	Approvals []Approval `json:"approvals"`
}

// Decision is the body of POST /api/approvals/{id}/approve and /reject.
type Decision struct {
	By       string `json:"by"`
	CodeHash string `json:"codeHash"`
	// Groups are the groups of who decides, relayed like By by a
	// credential with the admin scope (the operator relays a Kubernetes
	// user's); a kernel that names approver groups counts an approval
	// only from one of them.
	Groups []string `json:"groups,omitempty"`
}

// Installed is an installed agent plugin as the kernel restores it: the
// answer of GET /api/plugins/{id}, so it can be exported and submitted
// again.
type Installed struct {
	Manifest Manifest `json:"manifest"`
	Code     string   `json:"code"`
	CodeHash string   `json:"codeHash"`
	Enabled  bool     `json:"enabled"`
}

// MaxVersions is how many of a plugin's versions GET
// /api/plugins/{id}/versions lists: the newest ones.
const MaxVersions = 20

// PluginVersion is one version of an agent plugin the kernel installed.
type PluginVersion struct {
	Version     string `json:"version"`
	CodeHash    string `json:"codeHash"`
	RequestedBy string `json:"requestedBy,omitempty"`
	// Time is when the version was committed.
	Time time.Time `json:"time"`
}

// PluginVersions is the answer of GET /api/plugins/{id}/versions: the
// versions installed, oldest first, at most MaxVersions.
type PluginVersions struct {
	Versions []PluginVersion `json:"versions"`
}

// PluginVersionCode is the answer of GET
// /api/plugins/{id}/versions/{hash}: one version and its code.
type PluginVersionCode struct {
	PluginVersion
	Code string `json:"code"`
}

// PluginStatus is the answer of GET /api/plugins/{id}/status: what the
// kernel runs of one plugin and what of it waits for a human, read from
// memory (no log fold).
type PluginStatus struct {
	// Fiber is the installed plugin; nil when none is.
	Fiber *Fiber `json:"fiber"`
	// Pending are its submissions waiting for a decision.
	Pending []Approval `json:"pending"`
}

// Uninstalled is the answer of DELETE /api/plugins/{id}.
type Uninstalled struct {
	Uninstalled string `json:"uninstalled"`
}

// Event is one entry of the kernel's event log.
type Event struct {
	Seq    int64           `json:"seq"`
	Type   string          `json:"type"`
	Plugin string          `json:"plugin,omitempty"`
	Time   time.Time       `json:"time"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// EventPage is the answer of GET /api/events.
type EventPage struct {
	Events []Event `json:"events"`
}

// ChatRequest is the body of POST /api/chat and /api/chat/stream.
type ChatRequest struct {
	Session string `json:"session"`
	Text    string `json:"text"`
}

// ChatStep is one tool call of a chat turn.
type ChatStep struct {
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	Input   json.RawMessage `json:"input"`
	Result  string          `json:"result"`
	IsError bool            `json:"isError,omitempty"`
}

// ChatReply is the answer of POST /api/chat: the agent's reply and the
// tool calls it made.
type ChatReply struct {
	Reply string     `json:"reply"`
	Steps []ChatStep `json:"steps"`
	// Halt is set when the budget stopped the turn.
	Halt *BudgetHalt `json:"halt,omitempty"`
}

// ChatEvent is one server-sent event of POST /api/chat/stream; Type is one
// of the ChatEvent constants.
type ChatEvent struct {
	Type    string      `json:"type"`
	Text    string      `json:"text,omitempty"`
	Step    *ChatStep   `json:"step,omitempty"`
	Verdict *Verdict    `json:"verdict,omitempty"`
	Reply   *ChatReply  `json:"reply,omitempty"`
	Halt    *BudgetHalt `json:"halt,omitempty"`
	Error   string      `json:"error,omitempty"`
}

// Route is one route the kernel serves, in State.Routes.
type Route struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Plugin string `json:"plugin"`
	Scope  string `json:"scope,omitempty"`
}

// Field is one field of a Collection.
type Field struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required,omitempty"`
	Default  any    `json:"default,omitempty"`
}

// Collection is a collection of records, in State.Collections.
type Collection struct {
	Name   string  `json:"name"`
	Fields []Field `json:"fields"`
	Public bool    `json:"public,omitempty"`
}

// Catalog is the answer of GET /api/catalog: the kernel's keys and points.
type Catalog struct {
	Keys   []CatalogKey   `json:"keys"`
	Points []CatalogPoint `json:"points"`
}

// KeyMeta is the trust metadata of a key.
type KeyMeta struct {
	Description      string `json:"description,omitempty"`
	MinProviderTrust Trust  `json:"minProviderTrust"`
	MinConsumerTrust Trust  `json:"minConsumerTrust"`
	// Requires are the capabilities reading or invoking the key needs;
	// Methods, per method, what invoking it needs besides; Reaches what
	// its service exercises for its caller.
	Requires         []string            `json:"requires,omitempty"`
	Methods          map[string][]string `json:"methods,omitempty"`
	ProviderRequires []string            `json:"providerRequires,omitempty"`
	Reaches          []string            `json:"reaches,omitempty"`
}

// CatalogKey is one key of the Catalog.
type CatalogKey struct {
	Name     string  `json:"name"`
	Meta     KeyMeta `json:"meta"`
	Defined  bool    `json:"defined"`
	Definer  string  `json:"definer,omitempty"`
	Provider string  `json:"provider,omitempty"`
}

// PointMeta is the metadata of a point.
type PointMeta struct {
	Description         string `json:"description,omitempty"`
	MinContributorTrust Trust  `json:"minContributorTrust"`
	// Requires are the capabilities contributing needs.
	Requires []string `json:"requires,omitempty"`
}

// CatalogPoint is one point of the Catalog; Contributions names the
// contributing plugin of each contribution, in order.
type CatalogPoint struct {
	Name          string    `json:"name"`
	Meta          PointMeta `json:"meta"`
	Definer       string    `json:"definer,omitempty"`
	Contributions []string  `json:"contributions"`
}

// ErrorAnswer is the body of every non-2xx JSON answer.
type ErrorAnswer struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong; Kind is one of the Kind constants.
type ErrorDetail struct {
	Message string `json:"message"`
	Kind    string `json:"kind"`
}
