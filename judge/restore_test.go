package judge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
)

// store is a kernel's log and blobs, kept across restarts.
type store struct {
	log   *kernel.MemoryLog
	blobs *kernel.MemoryBlobs
}

// boot starts a kernel with the route point and the judge on st, restores
// it and returns it with the judge's Service.
func (st store) boot(t *testing.T, exec kernel.Executor, policy judge.Policy) *world {
	t.Helper()
	k := kernel.New(kernel.Options{Log: st.log, Blobs: st.blobs, Executor: exec})
	j := judge.New(judge.Options{Executor: exec, Policy: policy})
	for _, p := range []kernel.Plugin{routes, j.Plugin()} {
		if err := k.Install(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	v, err := k.GetValue(judge.Key)
	if err != nil {
		t.Fatal(err)
	}
	return &world{k: k, judge: v.(judge.Service)}
}

// appendEvent writes an event straight into the log, as a hand edit would.
func (st store) appendEvent(t *testing.T, typ, plugin string, data any) {
	t.Helper()
	raw, _ := json.Marshal(data)
	if _, err := st.log.Append(context.Background(), kernel.Event{Type: typ, Plugin: plugin, Data: raw}); err != nil {
		t.Fatal(err)
	}
}

// forge writes a route plugin's code to the blobs and a plugin/installed
// for it to the log, with no judge decision: staged and committed with a
// plugin/mounted when commit is set, else the way logs were written before
// commits existed.
func (st store) forge(t *testing.T, id string, commit bool) {
	t.Helper()
	m, code := routePlugin(id)
	hash, err := st.blobs.Put(context.Background(), []byte(code))
	if err != nil {
		t.Fatal(err)
	}
	st.appendEvent(t, kernel.EventPluginInstalled, id, map[string]any{"manifest": m, "codeHash": hash, "trust": "agent", "staged": commit})
	if commit {
		st.appendEvent(t, kernel.EventPluginMounted, id, map[string]any{"codeHash": hash, "declaration": m.Declaration()})
	}
}

func routeOwners(k *kernel.Kernel) map[string]bool {
	out := map[string]bool{}
	for _, c := range k.Contributions("route") {
		out[c.Fiber] = true
	}
	return out
}

// A restart brings back only what the judge decided. A sensitive plugin a
// human approved restores with its route; a hand-written plugin/installed
// (no commit) and a forged install with a forged commit but no approval
// are left out, reported with the restore_refused taint and a
// plugin/restore_refused event each. An install written before the kernel
// committed mounts, which the judge's own judge/mounted vouches for,
// restores. Runs on both executors.
// Seen failing without the fix: both forged plugins came back with their
// routes.
func TestRestartRestoresOnlyWhatTheJudgeDecided(t *testing.T) {
	for name, exec := range map[string]func(testing.TB) kernel.Executor{
		"goja": func(testing.TB) kernel.Executor { return inProcess() }, "isolated": inChild,
	} {
		t.Run(name, func(t *testing.T) { testRestartRestoresDecided(t, exec(t)) })
	}
}

func testRestartRestoresDecided(t *testing.T, exec kernel.Executor) {
	ctx := context.Background()
	st := store{kernel.NewMemoryLog(), kernel.NewMemoryBlobs()}
	w := st.boot(t, exec, judge.Policy{})
	m, code := routePlugin("agent.approved")
	v := w.submit(t, m, code)
	if _, err := w.judge.Approve(ctx, v.ApprovalID, "alice", v.CodeHash); err != nil {
		t.Fatal(err)
	}
	st.forge(t, "agent.handwritten", false)
	st.forge(t, "agent.selfcommitted", true)
	legacy := legacyInstall(t, st, exec)
	w = st.boot(t, exec, judge.Policy{})
	got := routeOwners(w.k)
	if !got["agent.approved"] || !got[legacy] || got["agent.handwritten"] || got["agent.selfcommitted"] || len(got) != 2 {
		t.Fatalf("routes after a restart from %v, want agent.approved's and %s's only", got, legacy)
	}
	if !w.k.Tainted().Has(kernel.TaintRestoreRefused) {
		t.Fatalf("taint = %s, want restore_refused", w.k.Tainted())
	}
	for _, id := range []string{"agent.handwritten", "agent.selfcommitted"} {
		if !hasEventFor(t, w.k, kernel.EventPluginRestoreRefused, id) {
			t.Fatalf("no plugin/restore_refused for %s", id)
		}
	}
}

// legacyInstall writes what a kernel wrote before it committed mounts: an
// approved plugin's plugin/installed without the staged flag, then the
// judge's judge/approved and judge/mounted. It returns the plugin's id.
func legacyInstall(t *testing.T, st store, exec kernel.Executor) string {
	t.Helper()
	other := store{kernel.NewMemoryLog(), kernel.NewMemoryBlobs()}
	w := other.boot(t, exec, judge.Policy{})
	m, code := routePlugin("agent.legacy")
	v := w.submit(t, m, code)
	if _, err := w.judge.Approve(context.Background(), v.ApprovalID, "alice", v.CodeHash); err != nil {
		t.Fatal(err)
	}
	events, _ := other.log.Read(context.Background(), 0, 0)
	if _, err := st.blobs.Put(context.Background(), []byte(code)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Plugin != m.ID {
			continue
		}
		switch e.Type {
		case kernel.EventPluginInstalled:
			var d map[string]any
			_ = json.Unmarshal(e.Data, &d)
			delete(d, "staged")
			st.appendEvent(t, e.Type, e.Plugin, d)
		case judge.EventApproved, judge.EventMounted:
			st.appendEvent(t, e.Type, e.Plugin, e.Data)
		}
	}
	return m.ID
}

func hasEventFor(t *testing.T, k *kernel.Kernel, typ, plugin string) bool {
	t.Helper()
	events, err := k.Events(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Type == typ && e.Plugin == plugin {
			return true
		}
	}
	return false
}
