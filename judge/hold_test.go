package judge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// An admin's disable stands through the judge: a new version approved
// after the admin disabled the plugin (the approval was asked for before)
// mounts disabled and held, its route not contributed, and the verdict
// says so; it stays disabled after a restart, and the admin's Enable
// brings it up.
// Seen failing without the hold checked in kernel.Propose: the approved
// version mounted enabled, its route contributed.
func TestApprovalAfterAnAdminsDisableKeepsItDisabled(t *testing.T) {
	ctx := context.Background()
	st := store{kernel.NewMemoryLog(), kernel.NewMemoryBlobs()}
	w := st.boot(t, inProcess(), judge.Policy{})
	m, code := routePlugin("agent.hi")
	approve(t, w, w.submit(t, m, code))
	m.Version, code = "2", code+"\n// v2"
	pending := w.submit(t, m, code)
	if err := w.k.Disable(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	v := approve(t, w, pending)
	for _, w := range []*world{w, st.boot(t, inProcess(), judge.Policy{})} {
		if f, _ := w.k.Fiber(m.ID); f.Version != "2" || f.Enabled || !f.Held || len(w.k.Contributions("route")) != 0 {
			t.Fatalf("after the approval agent.hi = %+v with %d routes, want version 2 disabled and held, no route",
				f, len(w.k.Contributions("route")))
		}
	}
	if !strings.Contains(v.Reason, "disabled by an admin") {
		t.Fatalf("verdict = %+v, want a reason saying an admin disabled it", v)
	}
	w = st.boot(t, inProcess(), judge.Policy{})
	if err := w.k.Enable(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if f, _ := w.k.Fiber(m.ID); !f.Enabled || f.Held || f.State != kernel.StateActive || len(w.k.Contributions("route")) != 1 {
		t.Fatalf("after the admin's enable agent.hi = %+v, want enabled and active with its route", f)
	}
}

// approve approves a pending verdict as alice and wants it mounted.
func approve(t *testing.T, w *world, pending judge.Verdict) judge.Verdict {
	t.Helper()
	wantVerdict(t, pending, expect{judge.StatusPending, judge.GatePolicy, ""})
	v, err := w.judge.Approve(context.Background(), pending.ApprovalID, "alice", pending.CodeHash)
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, v, expect{judge.StatusMounted, judge.GateMount, ""})
	return v
}
