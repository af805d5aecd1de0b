package controllers

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

const testHash = "sha256:aaaa"

// fibers of the table: what the kernel runs of the plugin.
var (
	noFiber   = adminv1.Fiber{}
	active    = adminv1.Fiber{ID: "agent.x", Version: "2", Enabled: true, State: adminv1.StateActive, CodeHash: testHash}
	olderCode = adminv1.Fiber{ID: "agent.x", Version: "1", Enabled: true, State: adminv1.StateActive, CodeHash: "sha256:bbbb"}
	disabled  = adminv1.Fiber{ID: "agent.x", Version: "2", Enabled: false, State: adminv1.StateInactive, CodeHash: testHash}
	failed    = adminv1.Fiber{ID: "agent.x", Version: "2", Enabled: true, State: adminv1.StateFailed, CodeHash: testHash, Error: "boom"}
	// quarantined is a fiber the kernel quarantined (disabled and held).
	quarantined = adminv1.Fiber{ID: "agent.x", Version: "2", State: adminv1.StateInactive, CodeHash: testHash, Held: true,
		Quarantine: "quarantined: its sandbox stopped during a call"}
	waitingDep = adminv1.Fiber{ID: "agent.x", Version: "2", Enabled: true, State: adminv1.StateInactive, CodeHash: testHash}
)

// verdicts of the table.
var (
	mounted    = adminv1.Verdict{Status: adminv1.StatusMounted, Gate: adminv1.GateMount, Version: "2"}
	pending    = adminv1.Verdict{Status: adminv1.StatusPending, Gate: adminv1.GatePolicy, Reason: "point route"}
	lint       = adminv1.Verdict{Status: adminv1.StatusRejected, Gate: adminv1.GateLint, Reason: "imports fs"}
	rolledBack = adminv1.Verdict{Status: adminv1.StatusRejected, Gate: adminv1.GateInvariant, Reason: "broke /x", RolledBack: true}
	noGate     = adminv1.Verdict{Status: adminv1.StatusRejected, Reason: "refused"}
)

// TestPluginConditions is the mapping from what the kernel and the judge
// say to the Plugin's conditions, kstatus's Reconciling and Stalled
// included: "T/Reason" or "F/Reason" per condition type.
func TestPluginConditions(t *testing.T) {
	off := false
	tests := []struct {
		name     string
		set      func() (*pluginObservation, error)
		disabled bool // spec.enabled false
		want     string
	}{
		{name: "mounted, no approval needed", set: verdict(mounted, active, false),
			want: "Judged=T/Mounted Approved=T/NotRequired Mounted=T/Mounted Ready=T/Mounted Reconciling=F Stalled=F"},
		{name: "mounted after approval", set: verdict(mounted, active, true),
			want: "Approved=T/Approved Ready=T/Mounted Reconciling=F Stalled=F"},
		{name: "disabled as the spec says", set: verdict(mounted, disabled, false), disabled: true,
			want: "Mounted=F/Disabled Ready=T/Disabled Reconciling=F Stalled=F"},
		{name: "disabled, spec says enabled", set: verdict(mounted, disabled, false),
			want: "Mounted=F/Disabled Ready=F/Disabled Reconciling=T Stalled=F"},
		{name: "activation failed", set: verdict(mounted, failed, false),
			want: "Mounted=F/Failed Ready=F/Failed Reconciling=F Stalled=T"},
		{name: "a dependency is missing", set: verdict(mounted, waitingDep, false),
			want: "Mounted=F/DependencyMissing Ready=F/DependencyMissing Reconciling=T Stalled=F"},
		{name: "pending, nothing installed", set: verdict(pending, noFiber, false),
			want: "Judged=T/PendingApproval Approved=F/PendingApproval Mounted=F/PendingApproval Ready=F/PendingApproval Reconciling=T Stalled=F"},
		{name: "pending, older code serves", set: verdict(pending, olderCode, false),
			want: "Mounted=T/Mounted Ready=F/PendingApproval Reconciling=T Stalled=F"},
		{name: "rejected by lint", set: verdict(lint, noFiber, false),
			want: "Judged=F/GateLint Approved=F/GateLint Mounted=F/GateLint Ready=F/GateLint Reconciling=F Stalled=T"},
		{name: "rejected by lint, older code serves", set: verdict(lint, olderCode, false),
			want: "Judged=F/GateLint Mounted=T/Mounted Ready=F/GateLint Stalled=T"},
		{name: "rolled back", set: verdict(rolledBack, noFiber, false),
			want: "Judged=F/GateInvariant Mounted=F/RolledBack Ready=F/GateInvariant Stalled=T"},
		{name: "rejected without a gate", set: verdict(noGate, noFiber, false),
			want: "Judged=F/Rejected Ready=F/Rejected Stalled=T"},
		{name: "denied by a human", set: denied(noFiber),
			want: "Judged=T/PendingApproval Approved=F/Denied Ready=F/Denied Reconciling=F Stalled=T"},
		{name: "denied, older code serves", set: denied(olderCode),
			want: "Mounted=T/Mounted Ready=F/Denied Stalled=T"},
		{name: "tenant missing", set: waitingFor(smsv1.ReasonTenantNotFound),
			want: "Judged=F/TenantNotFound Ready=F/TenantNotFound Reconciling=T Stalled=F"},
		{name: "tenant not ready", set: waitingFor(smsv1.ReasonTenantNotReady),
			want: "Ready=F/TenantNotReady Reconciling=T Stalled=F"},
		{name: "code ConfigMap missing", set: waitingFor(smsv1.ReasonReferenceNotFound),
			want: "Ready=F/ReferenceNotFound Reconciling=T Stalled=F"},
		{name: "kernel unreachable", set: failing(unreachable(fmt.Errorf("refused"))),
			want: "Ready=F/KernelUnreachable Reconciling=T Stalled=F"},
		{name: "invalid spec", set: failing(invalidSpec(errors.New("bad"))),
			want: "Judged=F/InvalidSpec Ready=F/InvalidSpec Reconciling=F Stalled=T"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &smsv1.Plugin{Spec: smsv1.PluginSpec{ID: "agent.x", Version: "2"}, Status: smsv1.PluginStatus{CodeHash: testHash}}
			if tt.disabled {
				p.Spec.Enabled = &off
			}
			o, err := tt.set()
			p.Status = pluginStatus(p, o, err)
			for _, want := range strings.Fields(tt.want) {
				typ, rest, _ := strings.Cut(want, "=")
				status, reason, _ := strings.Cut(rest, "/")
				c := meta.FindStatusCondition(p.Status.Conditions, typ)
				if c == nil {
					t.Errorf("no %s condition; have %v", typ, p.Status.Conditions)
					continue
				}
				if got := string(c.Status)[:1]; got != status || (reason != "" && c.Reason != reason) {
					t.Errorf("%s = %s/%s (%s), want %s", typ, got, c.Reason, c.Message, rest)
				}
			}
		})
	}
}

// verdict is a reconcile that reached the kernel's verdict v on the
// table's code, with fiber f running.
func verdict(v adminv1.Verdict, f adminv1.Fiber, approved bool) func() (*pluginObservation, error) {
	return func() (*pluginObservation, error) {
		o := &pluginObservation{hash: testHash, verdict: &v, fiber: f, approved: approved, judged: true}
		return o, verdictOutcome(o)
	}
}

// denied is a reconcile that found the table's code denied by a human.
func denied(f adminv1.Fiber) func() (*pluginObservation, error) {
	return func() (*pluginObservation, error) {
		a := &smsv1.Approval{}
		a.Name = "x-aaaa"
		a.Status.Conditions = []metav1.Condition{{Type: smsv1.ConditionDenied, Status: metav1.ConditionTrue, Reason: smsv1.ReasonDenied, Message: "denied by bob"}}
		o := &pluginObservation{hash: testHash, denial: a, fiber: f}
		return o, verdictOutcome(o)
	}
}

// waitingFor is a reconcile that waits with reason.
func waitingFor(reason string) func() (*pluginObservation, error) {
	return failing(waitFor(reason, "waiting"))
}

// failing is a reconcile that ended with err before the kernel answered.
func failing(err error) func() (*pluginObservation, error) {
	return func() (*pluginObservation, error) { return &pluginObservation{}, err }
}

// TestEveryReasonIsUsed: each condition reason the API declares is set by
// the operator and named by a test, so none is declared and never
// produced. It failed on the reasons this check removed (Submitted,
// Applied, KernelRefused).
func TestEveryReasonIsUsed(t *testing.T) {
	reasons := declaredReasons(t, filepath.Join("..", "api", "v1", "conditions.go"))
	var src, tests []string
	for _, dir := range []string{".", filepath.Join("..", "internal", "operator", "webhook")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(f, "_test.go") {
				tests = append(tests, string(raw))
			} else {
				src = append(src, string(raw))
			}
		}
	}
	for _, r := range reasons {
		name, value := r[0], r[1]
		if !slices.ContainsFunc(src, func(s string) bool { return strings.Contains(s, "smsv1."+name) }) && name != "ReasonRejected" {
			t.Errorf("%s is never set by the operator", name)
		}
		if !slices.ContainsFunc(tests, func(s string) bool { return strings.Contains(s, "smsv1."+name) || strings.Contains(s, "/"+value+" ") }) {
			t.Errorf("%s (%s) is named by no test", name, value)
		}
	}
}

// declaredReasons parses the Reason* constants of a file: name and value.
func declaredReasons(t *testing.T, path string) [][2]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Reason") || len(vs.Values) != 1 {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
			out = append(out, [2]string{vs.Names[0].Name, strings.Trim(lit.Value, `"`)})
		}
		return true
	})
	if len(out) < 10 {
		t.Fatalf("found %d reasons in %s", len(out), path)
	}
	return out
}
