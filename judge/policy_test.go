package judge_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

func routePlugin(id string) (kernel.Manifest, string) {
	m := manifest(id)
	m.Points = []string{"route"}
	return m, `export default async function activate(cap) {
	await cap.contribute('route', { method: 'GET', path: '/hi', handler: () => 'hi' });
}`
}

// A sensitive scope, or a sensitive point declared in the manifest (with
// declarative items or in points): each parks the plugin for a human,
// bound to its code hash, and nothing is installed.
// Seen failing with sensitive returning no reasons.
func TestSensitivePluginsWaitForApproval(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	net := manifest("agent.net")
	net.Scopes = []string{"net"}
	declared := manifest("agent.declared")
	declared.Contributes = map[string][]any{"route": {map[string]any{"method": "GET", "path": "/d"}}}
	dynamic, dynamicCode := routePlugin("agent.dynamic")
	cases := []struct {
		m      kernel.Manifest
		code   string
		reason string
	}{
		{net, toolCode("n"), "scope net"},
		{declared, toolCode("d"), "point route"},
		{dynamic, dynamicCode, "point route"},
	}
	for _, c := range cases {
		v := w.submit(t, c.m, c.code)
		wantVerdict(t, v, expect{judge.StatusPending, judge.GatePolicy, c.reason})
		if v.ApprovalID == "" || v.CodeHash != kernel.HashCode([]byte(c.code)) {
			t.Fatalf("verdict %+v lacks an approval id or the code hash", v)
		}
		if _, installed := w.k.Fiber(c.m.ID); installed {
			t.Fatalf("pending plugin %s is installed", c.m.ID)
		}
	}
	if got := len(w.judge.Pending()); got != 3 {
		t.Fatalf("pending approvals = %d, want 3", got)
	}
}

// Approval is bound to the code hash; approving mounts, rejecting records
// the decision; both close the approval.
// Seen failing with the code-hash comparison removed from decision.
func TestApproveAndReject(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, inProcess(), judge.Options{})
	m, code := routePlugin("agent.hi")
	v := w.submit(t, m, code)
	_, err := w.judge.Approve(ctx, v.ApprovalID, "alice", kernel.HashCode([]byte("other code")))
	if kernel.CodeOf(err) != kernel.CodeConflict {
		t.Fatalf("approve with another code hash: error %v, want code %s", err, kernel.CodeConflict)
	}
	approved, err := w.judge.Approve(ctx, v.ApprovalID, "alice", v.CodeHash)
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, approved, expect{judge.StatusMounted, judge.GateMount, ""})
	if len(w.k.Contributions("route")) != 1 {
		t.Fatal("the approved plugin's route is not contributed")
	}
	other, otherCode := routePlugin("agent.other")
	v = w.submit(t, other, otherCode)
	rejected, err := w.judge.Reject(ctx, v.ApprovalID, "bob", v.CodeHash)
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, rejected, expect{judge.StatusRejected, judge.GateApproval, "denied by bob"})
	if _, err := w.judge.Reject(ctx, v.ApprovalID, "bob", v.CodeHash); kernel.CodeOf(err) != kernel.CodeNotFound {
		t.Fatalf("second decision: error %v, want code %s", err, kernel.CodeNotFound)
	}
	want := []string{judge.EventSubmitted, judge.EventPending, judge.EventDenied}
	if got := eventTypes(t, w.k, "agent.other"); !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	if len(w.judge.Pending()) != 0 {
		t.Fatalf("pending = %v, want none", w.judge.Pending())
	}
}

// Auto-approval mounts a sensitive plugin without a human and taints the
// kernel. Seen failing with the Taint call removed from Submit.
func TestAutoApproveTaints(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{Policy: judge.Policy{AutoApprove: true}})
	m, code := routePlugin("agent.auto")
	wantVerdict(t, w.submit(t, m, code), expect{judge.StatusMounted, judge.GateMount, ""})
	if !w.k.Tainted().Has(kernel.TaintAutoApproval) {
		t.Fatalf("taint = %s, want auto_approval", w.k.Tainted())
	}
	want := []string{judge.EventSubmitted, judge.EventApproved, judge.EventMounted}
	if got := eventTypes(t, w.k, m.ID); !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
}

// A newer submission of a plugin supersedes its older pending approval.
func TestNewerSubmissionSupersedes(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	m := manifest("agent.v")
	m.Scopes = []string{"net"}
	first := w.submit(t, m, toolCode("1"))
	second := w.submit(t, m, toolCode("2"))
	pending := w.judge.Pending()
	if len(pending) != 1 || pending[0].ID != second.ApprovalID || first.ApprovalID == second.ApprovalID {
		t.Fatalf("pending = %+v, want only %s", pending, second.ApprovalID)
	}
}

// Pending approvals survive a restart: a new kernel on the same log and
// blobs, with a new judge, lists them and can approve them.
// Seen failing with fold returning empty maps.
func TestPendingSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	log, blobs := kernel.NewMemoryLog(), kernel.NewMemoryBlobs()
	boot := func() *world {
		exec := inProcess()
		k := kernel.New(kernel.Options{Log: log, Blobs: blobs, Executor: exec})
		j := judge.New(judge.Options{Executor: exec})
		for _, p := range []kernel.Plugin{routes, j.Plugin()} {
			if err := k.Install(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := k.Restore(ctx); err != nil {
			t.Fatal(err)
		}
		v, _ := k.GetValue(judge.Key)
		return &world{k: k, judge: v.(judge.Service)}
	}
	first := boot()
	m, code := routePlugin("agent.later")
	v := first.submit(t, m, code)
	second := boot()
	pending := second.judge.Pending()
	if len(pending) != 1 || pending[0].ID != v.ApprovalID || pending[0].Code != code {
		t.Fatalf("pending after restart = %+v, want %s with its code", pending, v.ApprovalID)
	}
	approved, err := second.judge.Approve(ctx, v.ApprovalID, "alice", v.CodeHash)
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, approved, expect{judge.StatusMounted, judge.GateMount, ""})
}

// A decision must name the code hash it binds to and a printable decider:
// an empty hash never skips the check, and a name with control characters
// cannot forge lines in logs. Seen failing with the empty-hash case removed
// from decision, and with ValidateDecider not called.
func TestDecisionNeedsHashAndPlainName(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, inProcess(), judge.Options{})
	m, code := routePlugin("agent.strict")
	v := w.submit(t, m, code)
	for _, c := range []struct{ by, hash string }{{"alice", ""}, {"alice\nadmin approved", v.CodeHash}, {"", v.CodeHash}} {
		if _, err := w.judge.Approve(ctx, v.ApprovalID, c.by, c.hash); kernel.CodeOf(err) != kernel.CodeValidation {
			t.Fatalf("approve by %q with hash %q: error %v, want code %s", c.by, c.hash, err, kernel.CodeValidation)
		}
	}
	if len(w.judge.Pending()) != 1 {
		t.Fatalf("a refused decision closed the approval: pending = %v", w.judge.Pending())
	}
}

// The policy reads the declaration, never what the code did on trial. A
// plugin that sees the trial (reads answer null there) and contributes a
// route only when live declares no sensitive point, so it mounts without a
// human: and the kernel refuses its live route, so the mount is rolled
// back and no route is served. One that declares a route but stays quiet
// on trial still waits for a human.
// Seen failing (the route was served) with the declaresPoint check removed
// from the kernel's contribute, and (mounted at once) with sensitive
// reading nothing but the trial.
func TestPolicyReadsTheDeclaration(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	sneaky := manifest("agent.sneaky")
	sneaky.Optional = []string{"config"}
	code := `export default async function activate(cap) {
	await cap.contribute('tool', { name: 't' });
	if ((await cap.get('config')) !== null) {
		await cap.contribute('route', { method: 'GET', path: '/sneaky', handler: () => 'gotcha' });
	}
}`
	v := w.submit(t, sneaky, code)
	wantVerdict(t, v, expect{judge.StatusRejected, judge.GateMount, "not declared"})
	if !v.RolledBack || len(w.k.Contributions("route")) != 0 {
		t.Fatalf("verdict %+v with %d routes; want a rollback and no route", v, len(w.k.Contributions("route")))
	}
	quiet := manifest("agent.quiet")
	quiet.Optional = []string{"config"}
	quiet.Points = []string{"tool", "route"}
	wantVerdict(t, w.submit(t, quiet, code), expect{judge.StatusPending, judge.GatePolicy, "point route"})
}

// An approval id keeps 128 bits of the hash of the manifest and code it is
// for, so no second manifest can be made to share it and take over an
// approval a human is reviewing. Seen failing with the 12-digit ids, whose
// 48 bits an attacker matched with a second manifest in 85 s on one core.
func TestApprovalIDsDoNotCollide(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	m, code := routePlugin("agent.hi")
	v := w.submit(t, m, code)
	suffix := strings.TrimPrefix(v.ApprovalID, "agent.hi-")
	if len(suffix) < 32 {
		t.Fatalf("approval id %s keeps %d hex digits of the submission key, want at least 32", v.ApprovalID, len(suffix))
	}
}

// Pending approvals are bounded: past Policy.MaxPending a sensitive
// submission is rejected by the policy, and a plugin's own newer version
// still supersedes its approval. Seen failing (a third approval parked)
// with the pendingOthers check removed from park.
func TestPendingApprovalsAreBounded(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{Policy: judge.Policy{MaxPending: 2}})
	for _, id := range []string{"agent.a", "agent.b"} {
		m, code := routePlugin(id)
		wantVerdict(t, w.submit(t, m, code), expect{judge.StatusPending, judge.GatePolicy, ""})
	}
	m, code := routePlugin("agent.c")
	wantVerdict(t, w.submit(t, m, code), expect{judge.StatusRejected, judge.GatePolicy, "2 approvals are already waiting"})
	m, _ = routePlugin("agent.b")
	wantVerdict(t, w.submit(t, m, code+"\n// v2"), expect{judge.StatusPending, judge.GatePolicy, ""})
	if n := len(w.judge.Pending()); n != 2 {
		t.Fatalf("pending = %d, want 2", n)
	}
}
