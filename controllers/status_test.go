package controllers

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

const testPoll = time.Hour

// TestStatusMapping is the whole mapping from what a reconcile observed
// and the error it ended with to the status of a Plugin and of a Tenant:
// the conditions ("Type=T/Reason", "Type=F/Reason"; the reason may be
// left out), whether observedGeneration moved to the generation (gen=new)
// or stayed (gen=old), and what controller-runtime is told (ok, requeue
// after a duration, an error retried with backoff, a terminal error). It
// needs no API server. Stalled comes from the error's type alone: the
// same verdict without its terminal error is Reconciling. Seen failing
// with observedGeneration moved whatever the error (the API error and
// unreachable rows), and with the verdict phase's error left out (the
// rejected and failed rows Reconciling, not Stalled).
func TestStatusMapping(t *testing.T) {
	t.Run("plugin", testPluginMapping)
	t.Run("tenant", testTenantMapping)
}

// pluginBefore is the Plugin whose status the reconciles of the table
// start from: a verdict judged at the previous generation.
func pluginBefore() *smsv1.Plugin {
	p := &smsv1.Plugin{Spec: smsv1.PluginSpec{ID: "agent.x", Version: "2"}}
	p.Generation = 2
	p.Status = smsv1.PluginStatus{ObservedGeneration: 1, CodeHash: "sha256:bbbb",
		Conditions: []metav1.Condition{
			{Type: smsv1.ConditionJudged, Status: metav1.ConditionTrue, Reason: smsv1.ReasonMounted},
			{Type: smsv1.ConditionReady, Status: metav1.ConditionTrue, Reason: smsv1.ReasonMounted},
			{Type: smsv1.ConditionReconciling, Status: metav1.ConditionFalse, Reason: smsv1.ReasonMounted},
			{Type: smsv1.ConditionStalled, Status: metav1.ConditionFalse, Reason: smsv1.ReasonMounted},
		}}
	return p
}

func testPluginMapping(t *testing.T) {
	apiErr := errors.New("etcd timed out")
	rejected := adminv1.Verdict{Status: adminv1.StatusRejected, Gate: adminv1.GateLint, Reason: "imports fs"}
	// What the verdict phase observed, and the error it ends with.
	lintObs := &pluginObservation{hash: testHash, verdict: &rejected, judged: true}
	failedObs := &pluginObservation{hash: testHash, verdict: &mounted, fiber: failed, judged: true}
	quarantinedObs := &pluginObservation{hash: testHash, verdict: &mounted, fiber: quarantined, judged: true}
	tests := []struct {
		name string
		obs  *pluginObservation
		err  error
		want string
	}{
		{name: "nothing judged: the kernel holds another copy", obs: &pluginObservation{},
			want: "Judged=T/Mounted Ready=T/Mounted Reconciling=F Stalled=F gen=new ok"},
		{name: "an API error", obs: &pluginObservation{}, err: apiErr,
			want: "Judged=T/Mounted Ready=T/Mounted Reconciling=F Stalled=F gen=old error"},
		{name: "a decision on its way", obs: &pluginObservation{}, err: fmt.Errorf("approval x is being carried: %w", errWait),
			want: "Ready=T/Mounted Reconciling=F gen=new requeue=1h0m0s"},
		{name: "busy keeps the last Judged", obs: &pluginObservation{}, err: busy(adminv1.Verdict{Gate: adminv1.GatePolicy, Retry: true}),
			want: "Judged=T/Mounted Ready=F/Busy Reconciling=T/Busy Stalled=F/Busy gen=new requeue=1h0m0s"},
		{name: "tenant not ready", obs: &pluginObservation{}, err: waitFor(smsv1.ReasonTenantNotReady, "not ready"),
			want: "Judged=T/Mounted Ready=F/TenantNotReady Reconciling=T Stalled=F gen=new requeue=1h0m0s"},
		{name: "kernel unreachable after the verdict", err: unreachable(errors.New("connection refused")),
			obs:  &pluginObservation{hash: testHash, id: "s1", verdict: &mounted, fiber: active},
			want: "Judged=T/Mounted Ready=F/KernelUnreachable Reconciling=T Stalled=F gen=old error verdict=mounted"},
		{name: "invalid spec", obs: &pluginObservation{}, err: invalidSpec(errors.New("bad")),
			want: "Judged=F/InvalidSpec Ready=F/InvalidSpec Reconciling=F Stalled=T/InvalidSpec gen=new terminal"},
		{name: "rejected", obs: lintObs, err: verdictOutcome(lintObs),
			want: "Judged=F/GateLint Ready=F/GateLint Reconciling=F Stalled=T/GateLint gen=new ok verdict=rejected"},
		{name: "the same verdict, without its terminal error, is not Stalled", obs: lintObs,
			want: "Ready=F/GateLint Reconciling=T Stalled=F gen=new ok"},
		{name: "mounted", obs: &pluginObservation{hash: testHash, verdict: &mounted, fiber: active, judged: true},
			want: "Judged=T/Mounted Mounted=T/Mounted Ready=T/Mounted Reconciling=F Stalled=F gen=new ok verdict=mounted"},
		{name: "mounted, activation failed", obs: failedObs, err: verdictOutcome(failedObs),
			want: "Mounted=F/Failed Ready=F/Failed Reconciling=F Stalled=T/Failed gen=new ok"},
		{name: "quarantined by the kernel", obs: quarantinedObs, err: verdictOutcome(quarantinedObs),
			want: "Mounted=F/Quarantined Quarantined=T/Quarantined Ready=F/Quarantined Reconciling=F Stalled=T/Quarantined gen=new ok verdict=mounted"},
		{name: "kept inactive by safe mode", obs: &pluginObservation{hash: testHash, verdict: &mounted, judged: true,
			fiber: adminv1.Fiber{ID: "agent.x", Version: "2", Enabled: true, State: adminv1.StateInactive, CodeHash: testHash, SafeMode: true}},
			want: "Mounted=F/SafeMode Ready=F/SafeMode Reconciling=T Stalled=F gen=new ok"},
		{name: "pending names its Approval", obs: &pluginObservation{hash: testHash, verdict: &pending, judged: true,
			approval: &corev1Reference},
			want: "Approved=F/PendingApproval Ready=F/PendingApproval Reconciling=T Stalled=F gen=new ok approval=x-aaaa"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pluginBefore()
			s := pluginStatus(p, tt.obs, tt.err)
			res, err := outcome(ctrl.Result{}, tt.err, testPoll)
			got := describe(s.Conditions, s.ObservedGeneration == p.Generation, res, err)
			if s.Verdict != nil {
				got += " verdict=" + string(s.Verdict.Result)
			}
			if s.ApprovalRef != nil {
				got += " approval=" + s.ApprovalRef.Name
			}
			check(t, got, tt.want)
		})
	}
}

var corev1Reference = corev1Ref("x-aaaa")

func testTenantMapping(t *testing.T) {
	running := &kernelruntime.Status{Running: true, Endpoint: "http://k:8080", AdminEndpoint: "http://k:8081"}
	state := &adminv1.State{Kernel: "v1", Fibers: []adminv1.Fiber{
		{ID: "agent.a", Trust: adminv1.TrustAgent, State: adminv1.StateActive},
		{ID: "agent.b", Trust: adminv1.TrustAgent, State: adminv1.StateFailed}}}
	tests := []struct {
		name string
		obs  *tenantObservation
		res  ctrl.Result
		err  error
		want string
	}{
		{name: "ready", obs: &tenantObservation{runtime: running, state: state}, res: ctrl.Result{RequeueAfter: testPoll},
			want: "Ready=T/KernelReady Reconciling=F Stalled=F gen=new requeue=1h0m0s mounted=1 failed=1"},
		{name: "ready with users", obs: &tenantObservation{runtime: running, state: &adminv1.State{Kernel: "v1", Users: true}}, res: ctrl.Result{RequeueAfter: testPoll},
			want: "Ready=T/KernelReady Reconciling=F Stalled=F gen=new requeue=1h0m0s mounted=0 failed=0 users"},
		{name: "ready in safe mode, one plugin quarantined", obs: &tenantObservation{runtime: running, state: &adminv1.State{Kernel: "v1", SafeMode: true,
			Fibers: []adminv1.Fiber{{ID: "agent.q", Trust: adminv1.TrustAgent, State: adminv1.StateInactive, Quarantine: "quarantined: crashed"}}}},
			res:  ctrl.Result{RequeueAfter: testPoll},
			want: "Ready=T/KernelReady Reconciling=F Stalled=F gen=new requeue=1h0m0s mounted=0 failed=0 quarantined=1 safe-mode"},
		{name: "suspended", obs: &tenantObservation{runtime: &kernelruntime.Status{}, suspended: true},
			want: "Ready=F/Suspended Reconciling=F/Suspended Stalled=F/Suspended gen=new ok"},
		{name: "a referenced Secret is missing", obs: &tenantObservation{}, err: waitFor(smsv1.ReasonReferenceNotFound, "secret k does not exist"),
			want: "Ready=F/ReferenceNotFound Reconciling=T/ReferenceNotFound Stalled=F gen=new requeue=1h0m0s"},
		{name: "invalid spec", obs: &tenantObservation{}, err: invalidSpec(errors.New("scripted needs a script")),
			want: "Ready=F/InvalidSpec Reconciling=F Stalled=T/InvalidSpec gen=new terminal"},
		{name: "the runtime failed", obs: &tenantObservation{}, err: &retryError{reason: smsv1.ReasonKernelStarting, err: errors.New("already exists")},
			want: "Ready=F/KernelStarting Reconciling=T/KernelStarting Stalled=F/KernelStarting gen=old error"},
		{name: "the pod is starting", obs: &tenantObservation{runtime: &kernelruntime.Status{}},
			err:  &waitError{reason: smsv1.ReasonKernelStarting, msg: "pod pending", after: 2 * time.Second},
			want: "Ready=F/KernelStarting Reconciling=T Stalled=F gen=new requeue=2s"},
		{name: "the kernel does not answer", obs: &tenantObservation{runtime: running},
			err:  &waitError{reason: smsv1.ReasonKernelUnreachable, msg: "timeout", after: 2 * time.Second},
			want: "Ready=F/KernelUnreachable Reconciling=T Stalled=F gen=new requeue=2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tn := &smsv1.Tenant{}
			tn.Generation = 3
			s := tenantStatus(tn, tt.obs, tt.err)
			res, err := outcome(tt.res, tt.err, testPoll)
			got := describe(s.Conditions, s.ObservedGeneration == tn.Generation, res, err)
			if s.Plugins != nil {
				got += fmt.Sprintf(" mounted=%d failed=%d", s.Plugins.Mounted, s.Plugins.Failed)
				if s.Plugins.Quarantined > 0 {
					got += fmt.Sprintf(" quarantined=%d", s.Plugins.Quarantined)
				}
			}
			if s.Users {
				got += " users"
			}
			if s.SafeMode {
				got += " safe-mode"
			}
			if tt.obs.runtime != nil && s.Endpoint != tt.obs.runtime.Endpoint {
				t.Errorf("endpoint %q, want %q", s.Endpoint, tt.obs.runtime.Endpoint)
			}
			check(t, got, tt.want)
		})
	}
}

// describe writes conditions, observedGeneration and the reconcile's
// result in the table's terms.
func describe(conds []metav1.Condition, observed bool, res ctrl.Result, err error) string {
	var b strings.Builder
	for _, c := range conds {
		fmt.Fprintf(&b, "%s=%s/%s ", c.Type, string(c.Status)[:1], c.Reason)
	}
	b.WriteString(map[bool]string{true: "gen=new", false: "gen=old"}[observed])
	switch {
	case errors.Is(err, reconcile.TerminalError(nil)):
		b.WriteString(" terminal")
	case err != nil:
		b.WriteString(" error")
	case res.RequeueAfter > 0:
		fmt.Fprintf(&b, " requeue=%s", res.RequeueAfter)
	default:
		b.WriteString(" ok")
	}
	return b.String()
}

// check reports each field of want that got lacks: "Type=S" matches any
// reason.
func check(t *testing.T, got, want string) {
	t.Helper()
	have := strings.Fields(got)
	for _, w := range strings.Fields(want) {
		found := false
		for _, h := range have {
			if h == w || (!strings.Contains(w, "/") && strings.HasPrefix(h, w+"/")) {
				found = true
			}
		}
		if !found {
			t.Errorf("got %q, want %s in it", got, w)
		}
	}
}
