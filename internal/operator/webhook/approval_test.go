package webhook_test

import (
	"strings"
	"testing"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
)

// TestApprovalWhoMayDecide sets the decision of a fresh Approval of
// alice's plugin "p" as different users under different tenant policies.
//
// Seen failing with the SubjectAccessReview's answer ignored (mayApprove
// returning true): `without_the_approve_verb: got no error, want one
// containing "user \"carol\" may not approve ..."`. Seen failing with the
// tenant's policy ignored (selfApproval never refusing):
// `requester_under_forbidSelfApproval: got no error, want one containing
// "user \"alice\" requested plugin \"p\" ..."`. Seen failing with only
// spec.requestedBy compared, not the Plugin's sms.dev/requested-by:
// `requester_by_the_plugin's_annotation: got no error, ...`. Seen failing
// with the operator's exemption removed: `operator_without_the_approve_verb:
// got error admission webhook "vapproval.sms.dev" denied the request: user
// "system:serviceaccount:sms-system:sms-controller-manager" may not approve
// ..., want none`.
func TestApprovalWhoMayDecide(t *testing.T) {
	testenv.Need(t)
	serve(t)
	tests := []struct {
		name        string
		user        string
		forbid      bool
		plugin      string // the Approval's pluginRef; alice's "p" exists
		requestedBy string
		wantErr     string // {ns} stands for the namespace
	}{
		{name: "approver", user: "bob", forbid: true, plugin: "p", requestedBy: "alice"},
		{name: "without the approve verb", user: "carol", plugin: "p", requestedBy: "alice",
			wantErr: `user "carol" may not approve in namespace "{ns}": needs verb "approve" on approvals.sms.dev`},
		{name: "requester under forbidSelfApproval", user: "alice", forbid: true, plugin: "p", requestedBy: "alice",
			wantErr: `user "alice" requested plugin "p" and may not approve it: tenant "t" forbids self-approval`},
		{name: "requester by the plugin's annotation", user: "alice", forbid: true, plugin: "p", requestedBy: "someone",
			wantErr: `user "alice" requested plugin "p" and may not approve it: tenant "t" forbids self-approval`},
		{name: "requester when the tenant allows it", user: "alice", plugin: "p", requestedBy: "alice"},
		{name: "requester of a missing plugin", user: "alice", forbid: true, plugin: "gone", requestedBy: "alice"},
		{name: "operator without the approve verb", user: operator, forbid: true, plugin: "p", requestedBy: operator},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := newNamespace(t, tt.forbid)
			must(t, as(t, "alice").Create(t.Context(), newPlugin(ns, "p", nil)))
			approval := newApproval(ns, tt.plugin, tt.requestedBy)
			must(t, as(t, operator).Create(t.Context(), approval))
			err := update(t, as(t, tt.user), approval, func(a *smsv1.Approval) {
				a.Spec.Decision = smsv1.DecisionApproved
			})
			checkErr(t, err, strings.ReplaceAll(tt.wantErr, "{ns}", ns))
		})
	}
}

// TestApprovalDecidedBy follows one Approval: bob approves it, then tries
// to change his decision and to forge who decided and in which groups.
// Seen failing with the groups stamp left out of want (a forged
// ["reviewers"] stayed).
//
// Seen failing with the stamp removed (approvalMutator.Handle never taking
// the decides branch): `sms.dev/decided-by: got "", want "bob"` and
// `sms.dev/decided-at: got "", want "2026-12-01T10:30:00Z"`. Seen failing
// with the restore removed (updates admitted unpatched): `sms.dev/decided-by:
// got "mallory", want "bob"`.
func TestApprovalDecidedBy(t *testing.T) {
	testenv.Need(t)
	serve(t)
	ns := newNamespace(t, true)
	must(t, as(t, "alice").Create(t.Context(), newPlugin(ns, "p", nil)))
	approval := newApproval(ns, "p", "alice")
	must(t, as(t, operator).Create(t.Context(), approval))
	bob := as(t, "bob")

	must(t, update(t, bob, approval, func(a *smsv1.Approval) { a.Spec.Decision = smsv1.DecisionApproved }))
	checkAnnotation(t, approval, smsv1.AnnotationDecidedBy, "bob")
	checkAnnotation(t, approval, smsv1.AnnotationDecidedAt, decidedAt)
	checkAnnotation(t, approval, smsv1.AnnotationDecidedGroups, `["system:authenticated"]`)

	// The CRD's CEL rule refuses this before the validating webhook runs;
	// TestDecisionImmutable asks the webhook itself.
	err := update(t, bob, approval.DeepCopy(), func(a *smsv1.Approval) { a.Spec.Decision = smsv1.DecisionDenied })
	checkErr(t, err, "decision is immutable once set")

	must(t, update(t, bob, approval, func(a *smsv1.Approval) {
		a.Labels = map[string]string{"seen": "true"}
		a.Annotations = map[string]string{
			smsv1.AnnotationDecidedBy:     "mallory",
			smsv1.AnnotationDecidedAt:     "2000-01-01T00:00:00Z",
			smsv1.AnnotationDecidedGroups: `["reviewers"]`,
		}
	}))
	checkAnnotation(t, approval, smsv1.AnnotationDecidedBy, "bob")
	checkAnnotation(t, approval, smsv1.AnnotationDecidedAt, decidedAt)
	checkAnnotation(t, approval, smsv1.AnnotationDecidedGroups, `["system:authenticated"]`)
}

// TestApprovalCreated checks the stamps on Approvals created with or
// without a decision, with forged annotations.
//
// Seen failing with a decision at create not counted as deciding (decides
// false when old is nil): `pre-approved_by_bob: sms.dev/decided-by: got "",
// want "bob"` (the forged values were removed, not replaced). Seen failing
// with creates admitted unpatched: `undecided: sms.dev/decided-by: got
// "mallory", want none`. Seen failing with the operator's exemption removed:
// `pre-approved_by_the_operator: sms.dev/decided-by: got
// "system:serviceaccount:sms-system:sms-controller-manager", want "mallory"`.
func TestApprovalCreated(t *testing.T) {
	testenv.Need(t)
	serve(t)
	forged := map[string]string{
		smsv1.AnnotationDecidedBy: "mallory",
		smsv1.AnnotationDecidedAt: "2000-01-01T00:00:00Z",
	}
	tests := []struct {
		name           string
		user           string
		decision       smsv1.Decision
		wantBy, wantAt string
	}{
		{name: "pre-approved by bob", user: "bob", decision: smsv1.DecisionApproved, wantBy: "bob", wantAt: decidedAt},
		{name: "pre-denied by bob", user: "bob", decision: smsv1.DecisionDenied, wantBy: "bob", wantAt: decidedAt},
		{name: "undecided", user: "carol"},
		// The operator names the decider a kernel reported.
		{name: "pre-approved by the operator", user: operator, decision: smsv1.DecisionApproved,
			wantBy: "mallory", wantAt: "2000-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := newNamespace(t, true)
			approval := newApproval(ns, "p", "") // a pre-approval: only the operator sets requestedBy
			approval.Annotations = forged
			approval.Spec.Decision = tt.decision
			must(t, as(t, tt.user).Create(t.Context(), approval))
			checkAnnotation(t, approval, smsv1.AnnotationDecidedBy, tt.wantBy)
			checkAnnotation(t, approval, smsv1.AnnotationDecidedAt, tt.wantAt)
		})
	}
}
