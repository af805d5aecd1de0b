package judge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

func (w *world) submitAs(t testing.TB, by string, m kernel.Manifest, code string) judge.Verdict {
	t.Helper()
	v, err := w.judge.Submit(context.Background(), m, code, by)
	if err != nil {
		t.Fatalf("submit %s as %s: %v", m.ID, by, err)
	}
	return v
}

// One plugin id holds at most one pending approval: the same code
// resubmitted under manifests that differ only in their description parks
// one approval, the newest, and supersedes each older one in the log.
// Seen failing without the fix: 12 approvals parked (supersede closed only
// approvals of other code, and the cap did not count the plugin's own).
func TestOnePendingApprovalPerPlugin(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	m, code := routePlugin("agent.flood")
	var last judge.Verdict
	for i := range 12 {
		m.Description = fmt.Sprintf("copy %d", i)
		last = w.submit(t, m, code)
		wantVerdict(t, last, expect{judge.StatusPending, judge.GatePolicy, "point route"})
	}
	pending := w.judge.Pending()
	if len(pending) != 1 || pending[0].ID != last.ApprovalID {
		t.Fatalf("pending = %d approvals, want only the newest %s", len(pending), last.ApprovalID)
	}
	superseded := 0
	for _, typ := range eventTypes(t, w.k, m.ID) {
		if typ == judge.EventSuperseded {
			superseded++
		}
	}
	if superseded != 11 {
		t.Fatalf("judge/superseded events = %d, want 11", superseded)
	}
}

// One requester has at most Policy.MaxPendingPerRequester approvals
// waiting (8 by default); past it the policy rejects its sensitive
// submissions, naming the limit, while another requester still parks and
// the same requester may still replace one of its own.
// Seen failing without the fix: the ninth approval parked.
func TestPendingApprovalsPerRequester(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	for i := range judge.DefaultMaxPendingPerRequester {
		m, code := routePlugin(fmt.Sprintf("agent.p%d", i))
		wantVerdict(t, w.submitAs(t, "mallory", m, code), expect{judge.StatusPending, judge.GatePolicy, ""})
	}
	m, code := routePlugin("agent.one-more")
	wantVerdict(t, w.submitAs(t, "mallory", m, code),
		expect{judge.StatusRejected, judge.GatePolicy, "mallory already has 8 approvals waiting, the most the policy allows one requester (judge.Policy.MaxPendingPerRequester)"})
	wantVerdict(t, w.submitAs(t, "alice", m, code), expect{judge.StatusPending, judge.GatePolicy, ""})
	m, _ = routePlugin("agent.p0")
	wantVerdict(t, w.submitAs(t, "mallory", m, code+"\n// v2"), expect{judge.StatusPending, judge.GatePolicy, ""})
	if n := len(w.judge.Pending()); n != judge.DefaultMaxPendingPerRequester+1 {
		t.Fatalf("pending = %d, want %d", n, judge.DefaultMaxPendingPerRequester+1)
	}
}

// A pending approval holds at most Policy.MaxPendingBytes of manifest and
// code (320 KiB by default): a sensitive plugin with an 850 KB description
// is rejected at the policy gate naming the limit and parks nothing, while
// the same manifest without a sensitive point mounts (the manifest gate
// bounds it at 1 MiB).
// Seen failing without the fix: the 850 KB approval parked.
func TestPendingApprovalSizeIsBounded(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	padding := strings.Repeat("x", 850_000)
	m, code := routePlugin("agent.big")
	m.Description = padding
	wantVerdict(t, w.submit(t, m, code), expect{judge.StatusRejected, judge.GatePolicy,
		fmt.Sprintf("more than the %d a pending approval may hold (judge.Policy.MaxPendingBytes)", judge.DefaultMaxPendingBytes)})
	if n := len(w.judge.Pending()); n != 0 {
		t.Fatalf("pending = %d, want none", n)
	}
	tool := manifest("agent.big-tool")
	tool.Description = padding
	wantVerdict(t, w.submit(t, tool, toolCode("t")), expect{judge.StatusMounted, judge.GateMount, ""})
}

// An approval covers the code and the declaration a human saw: the
// approved code resubmitted with a wider declaration (another scope,
// point, injected, optional or provided key) waits for a new decision, and
// the approved version keeps running meanwhile; resubmitting exactly what
// was approved changes nothing. Run on both executors.
// Seen failing with the submission-key comparison removed from isMounted
// (so only the code hash counted): the wider declarations answered
// "mounted" with no new approval, on both executors.
func TestWiderDeclarationNeedsNewDecision(t *testing.T) {
	for name, exec := range map[string]func(testing.TB) kernel.Executor{
		"goja": func(testing.TB) kernel.Executor { return inProcess() }, "isolated": inChild,
	} {
		t.Run(name, func(t *testing.T) { testWiderDeclaration(t, exec(t)) })
	}
}

func testWiderDeclaration(t *testing.T, exec kernel.Executor) {
	ctx := context.Background()
	w := newWorld(t, exec, judge.Options{})
	m, code := routePlugin("agent.hi")
	v := w.submit(t, m, code)
	if _, err := w.judge.Approve(ctx, v.ApprovalID, "alice", v.CodeHash); err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, w.submit(t, m, code), expect{judge.StatusMounted, judge.GateMount, ""})
	wider := map[string]func(*kernel.Manifest){
		"scope":    func(m *kernel.Manifest) { m.Scopes = []string{"net"} },
		"point":    func(m *kernel.Manifest) { m.Points = append(m.Points, "tool") },
		"inject":   func(m *kernel.Manifest) { m.Inject = []string{"config"} },
		"optional": func(m *kernel.Manifest) { m.Optional = []string{"config"} },
		"provide":  func(m *kernel.Manifest) { m.Provide = []string{"agent.hi.greeting"} },
	}
	for what, widen := range wider {
		mm, _ := routePlugin("agent.hi")
		widen(&mm)
		got := w.submit(t, mm, code)
		if got.Status != judge.StatusPending || got.ApprovalID == v.ApprovalID {
			t.Fatalf("the approved code with another %s: verdict %+v, want a new pending approval", what, got)
		}
		if f, _ := w.k.Fiber("agent.hi"); f.CodeHash != v.CodeHash || len(f.Scopes)+len(f.Inject)+len(f.Optional) != 0 || len(f.Points) != 1 {
			t.Fatalf("after a wider %s was submitted the running plugin is %+v, want the approved declaration", what, f)
		}
	}
}

// A log written before a submission superseded every approval of its
// plugin may hold several pending for one plugin id; after a restart only
// the newest is pending.
// Seen failing without the fix: the restarted judge listed three.
func TestOldLogKeepsOnePendingPerPlugin(t *testing.T) {
	st := store{kernel.NewMemoryLog(), kernel.NewMemoryBlobs()}
	st.boot(t, inProcess(), judge.Policy{})
	m, code := routePlugin("agent.old")
	var last judge.Approval
	for i := range 3 {
		m.Description = fmt.Sprintf("copy %d", i)
		last = judge.Approval{ID: fmt.Sprintf("agent.old-%032d", i), PluginID: m.ID, Version: m.Version,
			CodeHash: kernel.HashCode([]byte(code)), Manifest: m, Code: code, RequestedBy: "mallory", Reasons: []string{"point route"}}
		st.appendEvent(t, judge.EventPending, m.ID, last)
	}
	pending := st.boot(t, inProcess(), judge.Policy{}).judge.Pending()
	if len(pending) != 1 || pending[0].ID != last.ID {
		t.Fatalf("pending after a restart = %d approvals, want only %s", len(pending), last.ID)
	}
}
