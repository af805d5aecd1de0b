package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// ownApproval is an Approval a person writes for the kernel's request about
// Plugin hello's route code, deciding approved.
func (w *world) ownApproval(name string) *smsv1.Approval {
	return &smsv1.Approval{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: smsv1.ApprovalSpec{PluginRef: corev1.LocalObjectReference{Name: "hello"}, PluginID: "agent.hello",
			CodeHash: adminv1.HashCode([]byte(routeCode)), Declaration: &smsv1.Declaration{Points: []string{"route"}},
			Decision: smsv1.DecisionApproved}}
}

// waitReason waits until Approval name's Ready condition has reason.
func (w *world) waitReason(name, cond, reason string) *smsv1.Approval {
	w.t.Helper()
	var a *smsv1.Approval
	w.eventually(name+" "+cond+" "+reason, func() error {
		a = w.approval(name)
		if c := meta.FindStatusCondition(a.Status.Conditions, cond); c == nil || c.Reason != reason {
			return fmt.Errorf("conditions %+v", a.Status.Conditions)
		}
		return nil
	})
	return a
}

// A tenant that needs two approvers from the group reviewers: bob's
// decision on the operator's Approval is counted and shown in its
// status.decisions while the plugin waits; the requester's own Approval and
// one from outside the group are not counted (NotCounted); carol's Approval
// completes the quorum and the plugin mounts, and bob's Approval then shows
// Approved. The groups come from the webhook's stamp of who decided. Seen
// failing with apply calling Approve without the decider's groups (bob's
// approval expired NotCounted: in none of the approver groups).
func TestSeveralApprovers(t *testing.T) {
	testenv.Need(t)
	w := newWorldPolling(t, 2*time.Second)
	two := int32(2)
	w.tenant("acme", smsv1.TenantJudge{Approvers: &two, ApproverGroups: []string{"reviewers"}})
	alice := w.user("alice", true, "reviewers")
	bob, carol := w.user("bob", true, "reviewers"), w.user("carol", true, "reviewers")
	dan := w.user("dan", true)
	ctx := context.Background()
	w.plugin(alice, "hello", "agent.hello", routeCode)
	p := w.waitPlugin("hello", map[string]bool{smsv1.ConditionJudged: true, smsv1.ConditionApproved: false})
	w.must(w.decide(bob, p.Status.ApprovalRef.Name, smsv1.DecisionApproved))
	a := w.waitReason(p.Status.ApprovalRef.Name, smsv1.ConditionReady, smsv1.ReasonAwaitingApprovers)
	if len(a.Status.Decisions) != 1 || a.Status.Decisions[0].By != "bob" || !slices.Equal(a.Status.Decisions[0].Groups, []string{"reviewers"}) {
		t.Fatalf("decisions = %+v, want bob's, from reviewers", a.Status.Decisions)
	}

	w.must(alice.Create(ctx, w.ownApproval("by-alice")))
	w.must(dan.Create(ctx, w.ownApproval("by-dan")))
	w.waitReason("by-alice", smsv1.ConditionExpired, smsv1.ReasonNotCounted)
	w.waitReason("by-dan", smsv1.ConditionExpired, smsv1.ReasonNotCounted)
	w.waitPlugin("hello", map[string]bool{smsv1.ConditionApproved: false, smsv1.ConditionMounted: false})

	w.must(carol.Create(ctx, w.ownApproval("by-carol")))
	w.waitPlugin("hello", map[string]bool{smsv1.ConditionMounted: true, smsv1.ConditionReady: true})
	w.waitReason(a.Name, smsv1.ConditionApproved, smsv1.ReasonApproved)
}
