package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// routeAt is code serving GET path.
func routeAt(path string) string {
	return strings.Replace(routeCode, "'/hi'", "'"+path+"'", 1)
}

// A git Plugin the judge refuses for want of capacity parks once a place
// frees, with no change to its spec. Alice's eight sensitive plugins fill
// the judge's bound per requester (judge.DefaultMaxPendingPerRequester),
// so her ninth is rejected at the policy gate with Retry: it is Ready
// False with reason Busy and Reconciling, not Stalled. Bob approves one of
// the eight; at its next poll the ninth is submitted again and parks.
// Seen failing without the Retry check in reconcile: the ninth was
// Stalled with reason GatePolicy, its rejection recorded as the verdict
// on its spec and never submitted again.
func TestBusyPluginParksWhenPlaceFrees(t *testing.T) {
	testenv.Need(t)
	w := newWorldPolling(t, 2*time.Second)
	w.tenant("acme", smsv1.TenantJudge{})
	alice, bob := w.user("alice", false), w.user("bob", true)
	for i := range adminv1.DefaultMaxPendingPerRequester {
		w.plugin(alice, fmt.Sprintf("p%d", i), fmt.Sprintf("agent.p%d", i), routeAt(fmt.Sprintf("/p%d", i)))
	}
	first := w.asking("p0")
	for i := 1; i < adminv1.DefaultMaxPendingPerRequester; i++ {
		w.asking(fmt.Sprintf("p%d", i))
	}
	w.plugin(alice, "ninth", "agent.ninth", routeAt("/ninth"))
	p := w.waitPlugin("ninth", map[string]bool{smsv1.ConditionReady: false, smsv1.ConditionReconciling: true, smsv1.ConditionStalled: false})
	if c := meta.FindStatusCondition(p.Status.Conditions, smsv1.ConditionReady); c.Reason != smsv1.ReasonBusy {
		t.Fatalf("ninth Ready reason %s (%s), want %s", c.Reason, c.Message, smsv1.ReasonBusy)
	}
	generation := p.Generation

	w.must(w.decide(bob, first.Name, smsv1.DecisionApproved))
	w.waitPlugin("p0", map[string]bool{smsv1.ConditionMounted: true})
	w.asking("ninth")
	w.must(w.admin.Get(context.Background(), w.key("ninth"), p))
	if p.Generation != generation || p.Status.Verdict == nil || p.Status.Verdict.Result != smsv1.VerdictResult(adminv1.StatusPending) {
		t.Fatalf("ninth: generation %d (was %d), verdict %+v; want the same spec pending", p.Generation, generation, p.Status.Verdict)
	}
}
