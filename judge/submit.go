package judge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/sms-baseline/sms/kernel"
)

// Submit implements Service.
func (j *Judge) Submit(ctx context.Context, m kernel.Manifest, code, requestedBy string) (Verdict, error) {
	s, err := j.begin(ctx)
	if err != nil {
		return Verdict{}, err
	}
	defer s.mu.Unlock()
	sub := &Submission{Manifest: m, Code: code, CodeHash: kernel.HashCode([]byte(code)), RequestedBy: requestedBy, kernel: s.api.Kernel,
		Grant: j.opts.Grant(ctx, requestedBy)}
	if sub.Grant == nil {
		sub.Grant = []string{} // grants nothing, and an approval records that
	}
	key := submissionKey(m, sub.CodeHash)
	if a, ok := s.pending[approvalID(m.ID, key)]; ok {
		return Verdict{Status: StatusPending, PluginID: m.ID, Version: m.Version, CodeHash: sub.CodeHash, Gate: GatePolicy,
			Reason: "needs approval: " + joinReasons(a.Reasons), ApprovalID: a.ID}, nil
	}
	if s.isMounted(m.ID, key, sub.CodeHash) {
		// The newest request for this plugin is what runs: other code
		// waiting for a human (say, the agent's change a person just
		// reverted) is superseded, as a new submission's would be.
		if err := s.supersede(ctx, m.ID); err != nil {
			return Verdict{}, err
		}
		return Verdict{Status: StatusMounted, PluginID: m.ID, Version: m.Version, CodeHash: sub.CodeHash, Gate: GateMount}, nil
	}
	if err := s.record(ctx, EventSubmitted, m.ID, submittedEvent{Version: m.Version, CodeHash: sub.CodeHash, RequestedBy: requestedBy}); err != nil {
		return Verdict{}, err
	}
	s.api.Fault(FaultSubmitted)
	if v, ok, err := j.runGates(ctx, s, sub); !ok || err != nil {
		return v, err
	}
	s.api.Fault(FaultGatesPassed)
	reasons := j.sensitive(sub)
	if len(reasons) > 0 && !j.opts.Policy.AutoApprove {
		return j.park(ctx, s, sub, reasons)
	}
	approval := ""
	if len(reasons) > 0 {
		s.api.Taint(kernel.TaintAutoApproval)
		approval = approvalID(m.ID, key)
		if err := s.record(ctx, EventApproved, m.ID, decisionEvent{ApprovalID: approval, CodeHash: sub.CodeHash,
			DecidedBy: "policy: auto-approve", Reasons: reasons}); err != nil {
			return Verdict{}, err
		}
	}
	return j.mount(ctx, s, sub, approval)
}

// runGates runs every gate in order; the first refusal is recorded and
// returned as a rejected verdict (ok false).
func (j *Judge) runGates(ctx context.Context, s *epoch, sub *Submission) (Verdict, bool, error) {
	sub.Catalog = s.api.Catalog()
	for _, g := range gates(s.api.Kernel) {
		err := j.runChecked(ctx, "gate "+g.Name, func(ctx context.Context) error { return g.Check(ctx, sub) })
		if err != nil {
			v, rerr := j.reject(ctx, s, sub, refusal{g.Name, err.Error()})
			v.Retry = isBusy(err)
			return v, false, rerr
		}
	}
	return Verdict{}, true, nil
}

// refusal is why a plugin was refused: the gate or step, and its reason.
type refusal struct{ gate, reason string }

func (j *Judge) reject(ctx context.Context, s *epoch, sub *Submission, r refusal) (Verdict, error) {
	v := Verdict{Status: StatusRejected, PluginID: sub.Manifest.ID, Version: sub.Manifest.Version, CodeHash: sub.CodeHash,
		Gate: r.gate, Reason: r.reason}
	j.opts.Logger.Info("Plugin rejected", "plugin", v.PluginID, "gate", r.gate, "reason", r.reason)
	return v, s.record(ctx, EventRejected, v.PluginID, verdictEvent{Version: v.Version, CodeHash: v.CodeHash, Gate: r.gate, Reason: r.reason})
}

// park records a pending approval; older approvals for the same plugin are
// superseded by it, so a plugin id has at most one. The policy's bounds on
// pending approvals refuse it first (see parkRefusal).
func (j *Judge) park(ctx context.Context, s *epoch, sub *Submission, reasons []string) (Verdict, error) {
	m := sub.Manifest
	a := Approval{ID: approvalID(m.ID, submissionKey(m, sub.CodeHash)), PluginID: m.ID, Version: m.Version,
		CodeHash: sub.CodeHash, Manifest: m, Code: sub.Code, RequestedBy: sub.RequestedBy, Reasons: reasons,
		Requested: j.opts.Now().UTC(), Capabilities: sub.Capabilities, Grant: sub.Grant,
		Replaces: replaced(ctx, s.api.Kernel, m.ID, sub.Code)}
	if reason, busy := j.parkRefusal(s, sub); reason != "" {
		v, err := j.reject(ctx, s, sub, refusal{GatePolicy, reason})
		v.Retry = busy
		return v, err
	}
	if err := s.supersede(ctx, m.ID); err != nil {
		return Verdict{}, err
	}
	if err := s.record(ctx, EventPending, m.ID, a); err != nil {
		return Verdict{}, err
	}
	s.setPending(a.ID, &a)
	j.opts.Logger.Info("Plugin waits for approval", "plugin", m.ID, "approval", a.ID, "reasons", reasons)
	return Verdict{Status: StatusPending, PluginID: m.ID, Version: m.Version, CodeHash: sub.CodeHash, Gate: GatePolicy,
		Reason: "needs approval: " + joinReasons(reasons), ApprovalID: a.ID}, nil
}

// Approve implements Service. The gates run again before the mount: the
// kernel may have changed since the submission.
func (j *Judge) Approve(ctx context.Context, approvalID, decidedBy, codeHash string) (Verdict, error) {
	s, a, err := j.decision(ctx, approvalID, decidedBy, codeHash)
	if err != nil {
		return Verdict{}, err
	}
	defer s.mu.Unlock()
	if j.opts.Policy.quorum() {
		var done bool
		if decidedBy, done, err = j.count(ctx, s, &a, decidedBy); err != nil {
			return Verdict{}, err
		}
		if !done {
			return j.awaiting(a), nil
		}
	}
	if err := s.record(ctx, EventApproved, a.PluginID, decisionEvent{ApprovalID: a.ID, CodeHash: a.CodeHash, DecidedBy: decidedBy}); err != nil {
		return Verdict{}, err
	}
	s.setPending(a.ID, nil)
	sub := &Submission{Manifest: a.Manifest, Code: a.Code, CodeHash: a.CodeHash, RequestedBy: a.RequestedBy, kernel: s.api.Kernel,
		Grant: a.Grant}
	if sub.Grant == nil { // an approval parked before grants were recorded
		sub.Grant = j.opts.Grant(ctx, a.RequestedBy)
	}
	if v, ok, err := j.runGates(ctx, s, sub); !ok || err != nil {
		return v, err
	}
	return j.mount(ctx, s, sub, a.ID)
}

// Reject implements Service.
func (j *Judge) Reject(ctx context.Context, approvalID, decidedBy, codeHash string) (Verdict, error) {
	s, a, err := j.decision(ctx, approvalID, decidedBy, codeHash)
	if err != nil {
		return Verdict{}, err
	}
	defer s.mu.Unlock()
	if err := s.record(ctx, EventDenied, a.PluginID, decisionEvent{ApprovalID: a.ID, CodeHash: a.CodeHash, DecidedBy: decidedBy}); err != nil {
		return Verdict{}, err
	}
	s.setPending(a.ID, nil)
	return Verdict{Status: StatusRejected, PluginID: a.PluginID, Version: a.Version, CodeHash: a.CodeHash, Gate: GateApproval,
		Reason: "denied by " + decidedBy, ApprovalID: a.ID}, nil
}

// decision returns the locked epoch and the pending approval, checking
// the decider's name and the code hash the decider saw.
func (j *Judge) decision(ctx context.Context, id, decidedBy, codeHash string) (*epoch, Approval, error) {
	if err := ValidateDecider(decidedBy); err != nil {
		return nil, Approval{}, err
	}
	s, err := j.begin(ctx)
	if err != nil {
		return nil, Approval{}, err
	}
	a, ok := s.pending[id]
	switch {
	case !ok:
		s.mu.Unlock()
		return nil, Approval{}, &kernel.Error{Code: kernel.CodeNotFound, Op: "decide", Fiber: ID, Message: fmt.Sprintf("no pending approval %q", id)}
	case codeHash == "":
		s.mu.Unlock()
		return nil, Approval{}, &kernel.Error{Code: kernel.CodeValidation, Op: "decide", Fiber: a.PluginID,
			Message: fmt.Sprintf("a decision on approval %s must name the code hash it was made on (%s)", id, a.CodeHash)}
	case codeHash != a.CodeHash:
		s.mu.Unlock()
		return nil, Approval{}, &kernel.Error{Code: kernel.CodeConflict, Op: "decide", Fiber: a.PluginID,
			Message: fmt.Sprintf("approval %s is for code %s, not %s", id, a.CodeHash, codeHash)}
	}
	return s, a, nil
}

// isMounted reports whether the judge mounted exactly this submission and
// the kernel still runs it.
func (s *epoch) isMounted(plugin, key, codeHash string) bool {
	if s.mounted[plugin] != key {
		return false
	}
	v, ok := s.api.Fiber(plugin)
	return ok && v.Enabled && v.CodeHash == codeHash && v.State != kernel.StateFailed
}

// submissionKey identifies a submission: its manifest and code.
func submissionKey(m kernel.Manifest, codeHash string) string {
	raw, _ := json.Marshal(m) // checked by the manifest gate; a failure here only weakens idempotency
	sum := sha256.Sum256(append(raw, codeHash...))
	return hex.EncodeToString(sum[:])
}

// approvalID names the approval of a submission; the same submission always
// gets the same id. It keeps 128 bits of the submission key: a decision
// names the approval by id and the code by hash, so two manifests whose ids
// collided could swap what a human approved (48 bits fell to a laptop in a
// minute and a half).
func approvalID(plugin, key string) string { return plugin + "-" + key[:approvalKeyDigits] }

// approvalKeyDigits is how many hex digits of the submission key an
// approval id keeps.
const approvalKeyDigits = 32

func joinReasons(reasons []string) string {
	out := ""
	for i, r := range reasons {
		if i > 0 {
			out += ", "
		}
		out += r
	}
	return out
}
