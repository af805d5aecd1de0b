package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/sms-baseline/sms/kernel"
)

// EventVoted records one approval of a pending approval that needs more
// approvers than it has (Policy.RequiredApprovers); the approval that
// completes the quorum is recorded as EventApproved.
const EventVoted = "judge/voted"

// Bounds of a quorum policy and of what an approval shows.
const (
	MaxRequiredApprovers = 10
	MaxApproverGroups    = 32
	// MaxCodeDiffBytes bounds the code diff an approval shows against the
	// version it replaces; a longer one is cut, saying so (the whole code
	// is the approval's Code).
	MaxCodeDiffBytes = 64 << 10
	// MaxReplacedManifestBytes bounds the replaced version's manifest an
	// approval keeps (a plugin that mounted without a human may have a
	// larger one); past it Replaces says so instead.
	MaxReplacedManifestBytes = 64 << 10
)

// ValidatePolicyQuorum checks the quorum fields of a policy.
func ValidatePolicyQuorum(p Policy) error {
	if p.RequiredApprovers < 0 || p.RequiredApprovers > MaxRequiredApprovers {
		return fmt.Errorf("required approvers must be between 1 and %d (0: the default, 1), not %d", MaxRequiredApprovers, p.RequiredApprovers)
	}
	if len(p.ApproverGroups) > MaxApproverGroups {
		return fmt.Errorf("at most %d approver groups, not %d", MaxApproverGroups, len(p.ApproverGroups))
	}
	for _, g := range p.ApproverGroups {
		if err := ValidateDecider(g); err != nil || g == "" {
			return fmt.Errorf("approver group %q must be printable text", g)
		}
	}
	return nil
}

// quorum reports whether approvals need more than one approver, or
// approvers from named groups; then the requester's own approval never
// counts.
func (p Policy) quorum() bool { return p.RequiredApprovers > 1 || len(p.ApproverGroups) > 0 }

// needed is how many distinct approvers an approval needs.
func (p Policy) needed() int { return max(1, p.RequiredApprovers) }

// vote checks one approval against a pending approval under a quorum
// policy and returns it as a Decision.
func (j *Judge) vote(ctx context.Context, a Approval, by string) (Decision, error) {
	p := j.opts.Policy
	refuse := func(code kernel.Code, msg string) error {
		return &kernel.Error{Code: code, Op: "approve", Fiber: a.PluginID, Message: msg}
	}
	if by == a.RequestedBy {
		return Decision{}, refuse(kernel.CodeForbidden, fmt.Sprintf(
			"%s requested plugin %s and cannot approve it: it needs %d approvers other than its requester", by, a.PluginID, p.needed()))
	}
	if slices.ContainsFunc(a.Decisions, func(d Decision) bool { return d.By == by }) {
		return Decision{}, refuse(kernel.CodeConflict, fmt.Sprintf("%s already approved %s; it needs another approver", by, a.ID))
	}
	d := Decision{By: by, At: j.opts.Now().UTC()}
	for _, g := range DeciderGroups(ctx) {
		if slices.Contains(p.ApproverGroups, g) {
			d.Groups = append(d.Groups, g)
		}
	}
	if len(p.ApproverGroups) > 0 && len(d.Groups) == 0 {
		return Decision{}, refuse(kernel.CodeForbidden, fmt.Sprintf(
			"%s is in none of the approver groups (%s)", by, strings.Join(p.ApproverGroups, ", ")))
	}
	return d, nil
}

// replaced returns what a pending plugin would replace, or nil.
func replaced(ctx context.Context, k *kernel.Kernel, id, code string) *Replaced {
	m, hash, ok := k.Committed(id)
	if !ok {
		return nil
	}
	r := &Replaced{Version: m.Version, CodeHash: hash, Manifest: m}
	if raw, err := json.Marshal(m); err != nil || len(raw) > MaxReplacedManifestBytes {
		r.Manifest = kernel.Manifest{ID: m.ID, Version: m.Version}
		r.Note = fmt.Sprintf("the manifest of version %s is over %d KiB: read it with GET /api/plugins/%s", m.Version,
			MaxReplacedManifestBytes>>10, id)
	}
	old, err := k.Code(ctx, hash)
	if err != nil {
		r.Note = strings.TrimPrefix(r.Note+"; the code of version "+m.Version+" could not be read: "+err.Error(), "; ")
		return r
	}
	r.CodeDiff = codeDiff(m.Version, string(old), code)
	return r
}

// codeDiff is the unified diff from old to new, cut at MaxCodeDiffBytes.
func codeDiff(version, old, code string) string {
	d := udiff.Unified("version "+version, "proposed", old, code)
	if len(d) <= MaxCodeDiffBytes {
		return d
	}
	cut := strings.LastIndexByte(d[:MaxCodeDiffBytes], '\n') + 1
	return d[:cut] + fmt.Sprintf("... the diff is cut at %d KiB; the whole code is the approval's code\n", MaxCodeDiffBytes>>10)
}

// count records one approver's approval of a under a quorum policy as
// judge/voted. It reports done once a has as many approvers as the policy
// needs, with every approver's name, quoted, for the judge/approved
// record; until then a stays pending.
func (j *Judge) count(ctx context.Context, s *epoch, a *Approval, by string) (string, bool, error) {
	d, err := j.vote(ctx, *a, by)
	if err != nil {
		return "", false, err
	}
	if err := s.record(ctx, EventVoted, a.PluginID, votedEvent{ApprovalID: a.ID, CodeHash: a.CodeHash, Decision: d}); err != nil {
		return "", false, err
	}
	a.Decisions = append(slices.Clone(a.Decisions), d)
	if len(a.Decisions) >= j.opts.Policy.needed() {
		names := make([]string, len(a.Decisions))
		for i, x := range a.Decisions {
			names[i] = strconv.Quote(x.By)
		}
		return strings.Join(names, ", "), true, nil
	}
	s.setPending(a.ID, a)
	return "", false, nil
}

// awaiting is the verdict of an approval that needs more approvers.
func (j *Judge) awaiting(a Approval) Verdict {
	need := j.opts.Policy.needed()
	reason := fmt.Sprintf("approved by %d of %d approvers; needs %d more", len(a.Decisions), need, need-len(a.Decisions))
	if g := j.opts.Policy.ApproverGroups; len(g) > 0 {
		reason += " from " + strings.Join(g, ", ")
	}
	return Verdict{Status: StatusPending, PluginID: a.PluginID, Version: a.Version, CodeHash: a.CodeHash, Gate: GateApproval,
		Reason: reason, ApprovalID: a.ID}
}

// votedEvent is the payload of EventVoted.
type votedEvent struct {
	ApprovalID string   `json:"approvalId"`
	CodeHash   string   `json:"codeHash"`
	Decision   Decision `json:"decision"`
}
