package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sms-baseline/sms/kernel"
)

// Names the judge defines. All three are system-only: agent code can
// neither read the judge nor add or see gates and invariants.
const (
	// Key is the key of the judge's Service.
	Key = "judge"
	// GatePoint is the point Gate items are contributed to.
	GatePoint = "gate"
	// InvariantPoint is the point Invariant items are contributed to.
	InvariantPoint = "invariant"
)

// AgentPrefix starts every agent plugin id.
const AgentPrefix = "agent."

// ID is the judge's fiber id.
const ID = "judge"

// The built-in gates, in the order they run, and the other steps a verdict
// can name.
const (
	GateManifest   = "manifest"
	GateTrust      = "trust"
	GateCapability = "capability"
	GateLint       = "lint"
	GateLoad       = "load"
	GatePolicy     = "policy"
	GateApproval   = "approval"
	GateMount      = "mount"
	GateInvariant  = "invariant"
)

// Audit events the judge appends (kernel.Record).
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

// Default policy: what needs a human.
var (
	DefaultSensitiveScopes = []string{"net"}
	// A prompt item steers what the agent builds next, so it waits for a
	// human; a tool only answers when the agent calls it, and every change
	// the agent then makes goes through the judge again. Views, actions and
	// menus are every user's screens: a label can tell them anything.
	DefaultSensitivePoints = []string{"route", "schedule", "prompt", "model-field", "model-method", "model-hook", "model-onchange", "automation",
		"view", "action", "menu"}
)

// Status is the outcome of a submission or decision.
type Status string

// Statuses.
const (
	StatusMounted  Status = "mounted"
	StatusPending  Status = "pending"
	StatusRejected Status = "rejected"
)

// Verdict is the judge's answer. Gate names the gate or step that decided:
// the failing gate of a rejection, GatePolicy for a pending approval,
// GateMount for a mount.
type Verdict struct {
	Status     Status `json:"status"`
	PluginID   string `json:"pluginId"`
	Version    string `json:"version"`
	CodeHash   string `json:"codeHash"`
	Gate       string `json:"gate"`
	Reason     string `json:"reason,omitempty"`
	ApprovalID string `json:"approvalId,omitempty"`
	// RolledBack is set when a mount was undone: the plugin failed to
	// activate or an invariant failed. Restored names the version put back.
	RolledBack bool   `json:"rolledBack,omitempty"`
	Restored   string `json:"restored,omitempty"`
	// Retry is set on a rejection for want of capacity, not for anything
	// in the plugin: the approvals already waiting fill the policy's
	// MaxPending or MaxPendingPerRequester (GatePolicy), or the executor's
	// bound on what it runs at once refused the load gate's trial
	// (GateLoad). The same submission may pass once a decision or a
	// closed unit frees a place, so a caller may submit it again later;
	// every other rejection stands until the plugin changes.
	Retry bool `json:"retry,omitempty"`
}

// Approval is a submission waiting for a human, bound to its code hash.
type Approval struct {
	ID          string          `json:"id"`
	PluginID    string          `json:"pluginId"`
	Version     string          `json:"version"`
	CodeHash    string          `json:"codeHash"`
	Manifest    kernel.Manifest `json:"manifest"`
	Code        string          `json:"code"`
	RequestedBy string          `json:"requestedBy"`
	Reasons     []string        `json:"reasons"`
	Requested   time.Time       `json:"requested"`
	// Capabilities is the plugin's capability set, derived from its
	// declaration (kernel.DeriveCapabilities), and Grant what its
	// requester could give it when it was submitted: the capability gate
	// runs again with that grant when a human approves.
	Capabilities []string `json:"capabilities,omitempty"`
	// Grant is written even when empty ([]): only an approval parked
	// before grants were recorded has none, and is judged with its
	// approver's grant.
	Grant []string `json:"grant"`
	// Decisions are the approvals given so far, when the policy needs
	// more than one approver (Policy.RequiredApprovers).
	Decisions []Decision `json:"decisions,omitempty"`
	// Replaces is the committed version this plugin would replace, with
	// the diff of its code; nil for a new plugin.
	Replaces *Replaced `json:"replaces,omitempty"`
}

// Service is the judge, as other system plugins see it under Key. Its
// methods are safe for concurrent use; submissions and decisions are
// serialized. Errors are for failures of the kernel or of the request (an
// unknown approval); a refused plugin is a Verdict, not an error.
type Service interface {
	// Submit judges an agent plugin and mounts it, parks it for approval,
	// or rejects it. Resubmitting the same manifest and code while it is
	// pending or mounted changes nothing and returns the same verdict.
	Submit(ctx context.Context, m kernel.Manifest, code, requestedBy string) (Verdict, error)
	// Approve mounts a pending submission. codeHash is required and must
	// be the approval's: a human approves the code they saw. decidedBy is
	// recorded; it must be printable text.
	Approve(ctx context.Context, approvalID, decidedBy, codeHash string) (Verdict, error)
	// Reject refuses a pending submission.
	Reject(ctx context.Context, approvalID, decidedBy, codeHash string) (Verdict, error)
	// Pending lists the approvals waiting for a decision, oldest first.
	Pending() []Approval
}

// Submission is what gates see: the plugin as declared. It deliberately
// holds nothing the plugin's code did on trial: agent code can tell a trial
// from a live run, so no gate may decide from what it did there. Gates
// read the manifest, which the kernel enforces on every call.
type Submission struct {
	Manifest    kernel.Manifest
	Code        string
	CodeHash    string
	RequestedBy string
	// Catalog is the kernel's keys and points when the gates started.
	Catalog kernel.Catalog
	// Grant is what the requester may give the plugin (Options.Grant);
	// Capabilities what its declaration derives, set by the capability
	// gate.
	Grant        []string
	Capabilities []string

	kernel *kernel.Kernel // for the built-in gates
}

// Gate is one check every submission passes, contributed to GatePoint.
// Check returns an error saying why the plugin is refused; an error, a
// panic or running past the judge's gate timeout all refuse it.
type Gate struct {
	Name  string
	Check func(ctx context.Context, s *Submission) error
}

// Invariant is a property of the live kernel that must hold after every
// mount, contributed to InvariantPoint. A violation rolls the mount back.
type Invariant struct {
	Name  string
	Check func(ctx context.Context, k KernelView) error
}

// KernelView is the read-only part of the kernel an invariant inspects.
// *kernel.Kernel implements it.
type KernelView interface {
	Has(key string) bool
	GetValue(key string) (any, error)
	Fiber(id string) (kernel.FiberView, bool)
	Fibers() []kernel.FiberView
	Contributions(point string) []kernel.Contribution
	Catalog() kernel.Catalog
	Tainted() kernel.TaintSet
}

// MaxPluginBytes bounds an encoded plugin: its manifest and its code.
const MaxPluginBytes = 2 * kernel.MaxSnapshotBytes

// Plugin is the JSON form of an agent plugin: {"manifest": {...}, "code": "..."}.
type Plugin struct {
	Manifest kernel.Manifest `json:"manifest"`
	Code     string          `json:"code"`
}

// DecodePlugin parses the JSON form of an agent plugin strictly: one
// object, no unknown fields, within MaxPluginBytes. (encoding/json bounds
// nesting; the manifest gate then holds items to the snapshot limits.)
func DecodePlugin(raw []byte) (Plugin, error) {
	var p Plugin
	if err := decodeStrict(raw, &p); err != nil {
		return Plugin{}, fmt.Errorf("decode plugin: %w", err)
	}
	return p, nil
}

// DecodeManifest parses a manifest strictly, like DecodePlugin.
func DecodeManifest(raw []byte) (kernel.Manifest, error) {
	var m kernel.Manifest
	if err := decodeStrict(raw, &m); err != nil {
		return kernel.Manifest{}, fmt.Errorf("decode manifest: %w", err)
	}
	return m, nil
}

func decodeStrict(raw []byte, v any) error {
	if len(raw) > MaxPluginBytes {
		return fmt.Errorf("%d bytes exceeds the limit of %d", len(raw), MaxPluginBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// MaxDeciderBytes bounds the name recorded as who requested or decided;
// 253 fits a Kubernetes user or object name and a DNS name.
const MaxDeciderBytes = 253

// ValidateDecider checks a name recorded as who decided: non-empty, at
// most MaxDeciderBytes, printable UTF-8 (no control characters, which
// could forge lines in logs and audit views).
func ValidateDecider(name string) error {
	if name == "" || len(name) > MaxDeciderBytes || !printable(name) {
		return &kernel.Error{Code: kernel.CodeValidation, Op: "decide", Fiber: ID,
			Message: fmt.Sprintf("the decider's name must be 1 to %d bytes of printable UTF-8", MaxDeciderBytes)}
	}
	return nil
}

// printable reports whether s is valid UTF-8 with only printable runes.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if !unicode.IsPrint(c) {
			return false
		}
	}
	return true
}

// Decision is one approver's approval, recorded on the pending Approval.
type Decision struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
	// Groups are the approver's groups that Policy.ApproverGroups names.
	Groups []string `json:"groups,omitempty"`
}

// Replaced is the committed version a pending plugin would replace: its
// manifest and code hash, and the unified diff from its code to the new
// code.
type Replaced struct {
	Version  string          `json:"version"`
	CodeHash string          `json:"codeHash"`
	Manifest kernel.Manifest `json:"manifest"`
	CodeDiff string          `json:"codeDiff"`
	// Note says what is missing: a manifest past MaxReplacedManifestBytes,
	// or code the blob store could not give.
	Note string `json:"note,omitempty"`
}

// deciderGroupsKey carries the groups of who decides.
type deciderGroupsKey struct{}

// WithDeciderGroups returns ctx naming the groups of whoever decides under
// it; under Policy.ApproverGroups an approval counts only from a decider in
// one of them. The admin API sets them from what an admin credential
// relays (the operator relays a Kubernetes user's groups).
func WithDeciderGroups(ctx context.Context, groups []string) context.Context {
	return context.WithValue(ctx, deciderGroupsKey{}, slices.Clone(groups))
}

// DeciderGroups returns the groups WithDeciderGroups put in ctx.
func DeciderGroups(ctx context.Context) []string {
	g, _ := ctx.Value(deciderGroupsKey{}).([]string)
	return g
}
