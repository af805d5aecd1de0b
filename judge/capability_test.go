package judge_test

import (
	"context"
	"slices"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// grantKey carries, in a test's context, what its requester may grant.
type grantKey struct{}

func withGrant(caps ...string) context.Context {
	return context.WithValue(context.Background(), grantKey{}, caps)
}

func grantFromContext(ctx context.Context, _ string) []string {
	caps, _ := ctx.Value(grantKey{}).([]string)
	return caps
}

// The capability gate refuses, before any code runs, a plugin whose
// declaration needs more than its requester may grant, naming what is
// missing, and any that declares a system capability whatever the grant;
// a plugin within the grant mounts. Seen failing with checkCapabilities
// returning nil (both refusals mounted).
func TestCapabilityGate(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{Grant: grantFromContext})
	m := manifest("agent.writer")
	m.Scopes = []string{contracts.CapDBWrite}
	v, err := w.judge.Submit(withGrant(contracts.CapDBRead), m, toolCode("w"), "bob")
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, v, expect{judge.StatusRejected, judge.GateCapability, "needs db.write, which bob may not give a plugin (they may give: db.read)"})
	if events := eventTypes(t, w.k, "agent.writer"); slices.Contains(events, judge.EventMounted) {
		t.Fatalf("events %v: the refused plugin mounted", events)
	}
	v, err = w.judge.Submit(withGrant(contracts.CapDBRead, contracts.CapDBWrite), m, toolCode("w"), "ada")
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, v, expect{judge.StatusMounted, judge.GateMount, ""})
	if f, _ := w.k.Fiber("agent.writer"); !slices.Equal(f.Capabilities, []string{contracts.CapDBWrite}) {
		t.Fatalf("agent.writer capabilities = %v, want [db.write]", f.Capabilities)
	}
	sys := manifest("agent.installer")
	sys.Scopes = []string{contracts.CapPluginInstall}
	v, err = w.judge.Submit(withGrant(kernel.AllCapabilities), sys, toolCode("i"), "root")
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, v, expect{judge.StatusRejected, judge.GateCapability, "plugin.install is for system plugins only"})
}

// An approval is judged again with the grant its requester had when it
// was submitted, not with the approver's. Seen failing with Approve
// taking Options.Grant of the approver's context.
func TestApprovalKeepsTheRequestersGrant(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{Grant: grantFromContext})
	m := manifest("agent.route")
	m.Points = []string{"route"}
	m.Scopes = []string{contracts.CapDBWrite}
	code := `export default async function activate(cap) {
	await cap.contribute('route', { method: 'GET', path: '/r', handler: () => ({ body: 'r' }) });
}`
	v, err := w.judge.Submit(withGrant(contracts.CapDBWrite), m, code, "bob")
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, v, expect{judge.StatusPending, judge.GatePolicy, "route"})
	// The approver's context grants nothing; bob's grant decides.
	got, err := w.judge.Approve(context.Background(), v.ApprovalID, "ada", v.CodeHash)
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, got, expect{judge.StatusMounted, judge.GateMount, ""})
}
