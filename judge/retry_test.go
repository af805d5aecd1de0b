package judge_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// A rejection for want of capacity says the same submission may pass
// later (Verdict.Retry): the policy's bound on approvals waiting, and the
// executor's bound on sandboxes at the load gate. A refusal of the plugin
// itself (the lint gate) does not. Once a decision frees a place, the
// same submission parks. Seen failing without Retry set on the policy's
// refusal (park): `mallory's ninth: Retry false, want true`.
func TestCapacityRejectionIsRetryable(t *testing.T) {
	w := newWorld(t, inProcess(), judge.Options{})
	var first judge.Verdict
	for i := range judge.DefaultMaxPendingPerRequester {
		m, code := routePlugin(fmt.Sprintf("agent.p%d", i))
		if v := w.submitAs(t, "mallory", m, code); i == 0 {
			first = v
		}
	}
	m, code := routePlugin("agent.ninth")
	v := w.submitAs(t, "mallory", m, code)
	wantVerdict(t, v, expect{judge.StatusRejected, judge.GatePolicy, "MaxPendingPerRequester"})
	if !v.Retry {
		t.Fatalf("mallory's ninth: Retry false, want true (%+v)", v)
	}
	lint := w.submitAs(t, "alice", manifest("agent.imports"), "import fs from 'fs'\nexport default async function activate(cap) {}")
	wantVerdict(t, lint, expect{judge.StatusRejected, judge.GateLint, ""})
	if lint.Retry {
		t.Fatalf("a lint refusal: Retry true, want false (%+v)", lint)
	}
	if _, err := w.judge.Reject(context.Background(), first.ApprovalID, "bob", first.CodeHash); err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, w.submitAs(t, "mallory", m, code), expect{judge.StatusPending, judge.GatePolicy, ""})
}

// The load gate's trial refused by the isolated executor's MaxChildren is
// a rejection at the load gate with Retry set; the same submission mounts
// once the sandbox holding the only place closes. Seen failing without
// Retry set from the gate's busyError (runGates): `load gate at capacity:
// Retry false, want true`.
func TestLoadGateAtCapacityIsRetryable(t *testing.T) {
	exec, err := isolated.New(isolated.Options{Command: []string{os.Args[0]}, Env: []string{"SMS_JUDGE_TEST_CHILD=1"}, MaxChildren: 1})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, exec, judge.Options{})
	hold, err := exec.Load(context.Background(), kernel.Bundle{Manifest: manifest("agent.hold"), Code: []byte(toolCode("x"))})
	if err != nil {
		t.Fatal(err)
	}
	m := manifest("agent.tool")
	v := w.submit(t, m, toolCode("a"))
	wantVerdict(t, v, expect{judge.StatusRejected, judge.GateLoad, "MaxChildren"})
	if !v.Retry {
		t.Fatalf("load gate at capacity: Retry false, want true (%+v)", v)
	}
	if err := hold.Close(); err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, w.submit(t, m, toolCode("a")), expect{judge.StatusMounted, judge.GateMount, ""})
}
