package services

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/automation"
	"github.com/sms-baseline/sms/plugins/orm"
)

func rules(items ...automation.Automation) kernel.Plugin {
	list := make([]any, len(items))
	for i, a := range items {
		list[i] = a
	}
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.rules", Version: "1", Inject: []string{automation.Key},
		Contributes: map[string][]any{automation.Point: list}}}
}

func (e *env) write(h map[string][]string, id int64, values map[string]any) {
	e.t.Helper()
	if r := e.Do("POST", "/api/orm/invoice/write", map[string]any{"ids": []int64{id}, "values": values}, h); r.Status != 200 {
		e.t.Fatalf("write %v: %d %s", values, r.Status, r.Body)
	}
}

func (e *env) statuses() map[string]automation.Status {
	e.t.Helper()
	v, err := e.Kernel.GetValue(automation.Key)
	if err != nil {
		e.t.Fatal(err)
	}
	svc := v.(automation.Service)
	if err := svc.Idle(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	list, _ := svc.Statuses(context.Background())
	out := map[string]automation.Status{}
	for _, s := range list {
		out[s.Name] = s
	}
	return out
}

// TestAutomationWatchAndFilter: a write automation watching state and
// filtered to paid invoices posts its note when a write changes state to
// paid, and not for a write of another field, a write of state to the
// value it had, or a change of state that leaves the filter. Seen failing
// with the watch ignored (a second note when state was written unchanged)
// and with the filter ignored (a note when the invoice went back to draft).
func TestAutomationWatchAndFilter(t *testing.T) {
	e := boot(t, options{plugins: []kernel.Plugin{rules(automation.Automation{Name: "paid-note", Model: "invoice",
		Trigger: automation.OnWrite, Watch: []string{"state"}, Filter: orm.Domain{[]any{"state", "=", "paid"}},
		Action: automation.Action{Kind: automation.ActNote, Body: "paid, thank you"}})}})
	cleo := e.user("cleo", "clerks")
	id := e.create(cleo, map[string]any{"number": "C-1"})
	for _, v := range []map[string]any{{"amount": 5}, {"state": "paid"}, {"state": "paid", "amount": 6}, {"state": "draft"}} {
		e.write(cleo, id, v)
	}
	if got := messages(e.thread(cleo, id)); len(got) != 1 || got[0] != "note: paid, thank you" {
		t.Fatalf("messages = %q, want one note", got)
	}
	if s := e.statuses()["paid-note"]; s.Runs != 2 || s.Failures != 0 {
		t.Fatalf("status %+v: want 2 runs (the filter left one with nothing to do)", s)
	}
}

// TestAutomationReentryAndChainDepth: an automation whose action triggers
// itself runs once, and a chain of automations each triggering the next
// stops at MaxChainDepth with the skipped one saying why. Seen failing
// with the re-entry check removed (the stamp automation ran 4 times, until
// the chain limit stopped it) and with the depth check removed (f6 was
// written).
func TestAutomationReentryAndChainDepth(t *testing.T) {
	chain := kernel.Plugin{Manifest: kernel.Manifest{ID: "app.chain", Version: "1", Inject: []string{orm.Key},
		Contributes: map[string][]any{orm.ModelPoint: {orm.Model{Name: "chain", Fields: map[string]orm.Field{
			"f1": {Kind: orm.KindInt}, "f2": {Kind: orm.KindInt}, "f3": {Kind: orm.KindInt},
			"f4": {Kind: orm.KindInt}, "f5": {Kind: orm.KindInt}, "f6": {Kind: orm.KindInt}, "stamps": {Kind: orm.KindInt},
		}}}}}}
	var items []automation.Automation
	for k := 1; k <= 5; k++ {
		items = append(items, automation.Automation{Name: fmt.Sprintf("a%d", k), Model: "chain", Trigger: automation.OnWrite,
			Watch: []string{fmt.Sprintf("f%d", k)}, Sudo: true,
			Action: automation.Action{Kind: automation.ActWrite, Values: map[string]any{fmt.Sprintf("f%d", k+1): 1}}})
	}
	// stamp's own write triggers stamp again; the guard stops it.
	items = append(items, automation.Automation{Name: "stamp", Model: "chain", Trigger: automation.OnWrite, Sudo: true,
		Action: automation.Action{Kind: automation.ActWrite, Values: map[string]any{"stamps": 1}}})
	e := boot(t, options{plugins: []kernel.Plugin{chain, rules(items...)}})
	o, sudo := e.ormService(), orm.Sudo(context.Background())
	id, err := o.Create(sudo, "chain", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Write(sudo, "chain", []int64{id}, map[string]any{"f1": 1}); err != nil {
		t.Fatal(err)
	}
	recs, _ := o.Read(sudo, "chain", []int64{id}, nil)
	if recs[0]["f5"] != int64(1) || recs[0]["f6"] != nil {
		t.Fatalf("after the chain: %v; want f2..f5 written and f6 not", recs[0])
	}
	st := e.statuses()
	if !strings.Contains(st["a5"].LastError, "the limit is 4") {
		t.Fatalf("a5: %+v, want it skipped for the chain's depth", st["a5"])
	}
	if st["a5"].Runs != 0 || st["a5"].Skipped != 1 {
		t.Fatalf("a5: %+v, want no run and one skipped", st["a5"])
	}
	if s := st["stamp"]; s.Runs != 4 || s.Skipped != 1 {
		t.Fatalf("stamp: %+v, want 4 runs (once per write of the chain under the depth limit, never re-entered) and 1 skipped", s)
	}
}

// TestAutomationPeriodicAcrossRestart: a periodic automation runs when
// due, and its last run survives a restart, so the restarted kernel
// neither runs it again at once nor waits a whole interval more. Seen
// failing with the last run never read back (it ran on every tick).
func TestAutomationPeriodicAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kernel.db")
	var runs atomic.Int64
	sweep := automation.Automation{Name: "sweep", Model: "invoice", Trigger: automation.OnTime, EveryMinutes: 5, Sudo: true,
		Filter: orm.Domain{[]any{"state", "=", "draft"}},
		Action: automation.Action{Kind: automation.ActHandler, Handler: func(context.Context, automation.Event) error {
			runs.Add(1)
			return nil
		}}}
	open := func() *env {
		st, err := sqlite.OpenStore(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return boot(t, options{store: st, plugins: []kernel.Plugin{rules(sweep)}})
	}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	e := open()
	e.create(e.user("cleo", "clerks"), map[string]any{"number": "C-1"})
	step := func(at time.Duration, want int64) {
		t.Helper()
		e.Tick(t0.Add(at))
		if n := runs.Load(); n != want {
			t.Fatalf("after a tick at +%s: %d runs, want %d", at, n, want)
		}
	}
	step(0, 1)
	step(time.Minute, 1)
	_ = e.Close()
	e = open()
	step(2*time.Minute, 1) // not repeated
	step(5*time.Minute, 2) // not skipped
	_ = e.Close()
	e = open()
	step(20*time.Minute, 3) // after a long stop: due once, not once per missed interval
	step(21*time.Minute, 3)
}

// paidNote is the agent plugin the scripted model defines: an automation
// that posts an audit note when an invoice is paid.
const paidNote = `export default async function activate(cap) {
  await cap.contribute('automation', {name: 'agent-paid-note', model: 'invoice', trigger: 'write', watch: ['state'],
    filter: [['state', '=', 'paid']], action: {kind: 'handler', handler: async (ev) => {
      for (const id of ev.ids) {
        await cap.invoke('orm-user', 'write', 'invoice', [id], {note: 'paid: thanked by ' + (await cap.invoke('identity', 'whoami')).login})
      }
    }}})
}`

// TestAgentAutomationWaitsAndActsAsItsUser: the agent defines an
// automation; it waits for a human. Once approved, paying an invoice runs
// it as the person who asked for it: on that person's invoice it writes,
// on an invoice they may not read it does nothing. Seen failing with the
// automation run as sudo (carl's invoice got the note too).
func TestAgentAutomationWaitsAndActsAsItsUser(t *testing.T) {
	e := boot(t, options{approve: true, turns: [][]contracts.Block{
		{toolUse("plugin_define", map[string]any{"manifest": map[string]any{"id": "agent.paid-note", "version": "1",
			"inject": []string{orm.UserKey, "identity"}, "scopes": []string{"db.write"}, "points": []string{automation.Point}}, "code": paidNote})},
		text("it waits for approval"),
	}})
	cleo, carl := e.user("cleo", "clerks"), e.user("carl", "clerks")
	mine, theirs := e.create(cleo, map[string]any{"number": "C-1"}), e.create(carl, map[string]any{"number": "K-1"})
	r := e.Do("POST", "/api/chat", map[string]any{"session": "s", "text": "when an invoice is paid, thank the client"}, cleo)
	if r.Status != 200 || !strings.Contains(string(r.Body), `\"pending\"`) {
		t.Fatalf("define: %d %s", r.Status, r.Body)
	}
	e.write(cleo, mine, map[string]any{"state": "paid"})
	if s, ok := e.statuses()["agent-paid-note"]; ok {
		t.Fatalf("the automation is live before approval: %+v", s)
	}
	e.write(cleo, mine, map[string]any{"state": "draft"})
	e.approveAll()
	e.write(cleo, mine, map[string]any{"state": "paid"})
	e.write(carl, theirs, map[string]any{"state": "paid"})
	_ = e.statuses() // waits for the automation's queue
	read := func(id int64) any {
		recs, err := e.ormService().Read(orm.Sudo(context.Background()), "invoice", []int64{id}, orm.ReadSpec{"note": nil})
		if err != nil {
			t.Fatal(err)
		}
		return recs[0]["note"]
	}
	if got := read(mine); got != "paid: thanked by cleo" {
		t.Fatalf("cleo's invoice note = %v", got)
	}
	if got := read(theirs); got != nil {
		t.Fatalf("carl's invoice note = %v; the automation acts as cleo, who may not read it", got)
	}
	raw, _ := json.Marshal(e.statuses()["agent-paid-note"])
	if !strings.Contains(string(raw), `"runs":2`) {
		t.Fatalf("status %s: want two runs (the second found nothing cleo may read)", raw)
	}
}

// spin is an agent automation whose handler never ends.
const spin = `export default async function activate(cap) {
  await cap.contribute('automation', {name: 'agent-spin', model: 'invoice', trigger: 'write',
    action: {kind: 'handler', handler: async () => { while (true) {} }}})
}`

// TestAgentAutomationNeverSlowsWrites: an agent's automation that fires on
// every write runs on its own queue: the write that fires it answers at
// once while the run is still going, and the run ends at its time limit,
// failing only itself. Seen failing with agent automations run in the
// writer's request (the status showed the run finished, failed, by the
// time the write answered), and with a restarted plugin's automation
// starting a new status (the run's failure lost).
func TestAgentAutomationNeverSlowsWrites(t *testing.T) {
	e := boot(t, options{svc: baseline.ServiceOptions{Automation: automation.Options{RunTimeout: 2 * time.Second}}})
	if r := e.Do("POST", "/api/plugins", map[string]any{"code": spin, "manifest": map[string]any{
		"id": "agent.spin", "version": "1", "points": []string{automation.Point}}}, bearer(token)); r.Status != 200 || !strings.Contains(string(r.Body), `"mounted"`) {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	cleo := e.user("cleo", "clerks")
	id := e.create(cleo, map[string]any{"number": "C-1"})
	e.write(cleo, id, map[string]any{"amount": 1})
	v, _ := e.Kernel.GetValue(automation.Key)
	svc := v.(automation.Service)
	list, _ := svc.Statuses(context.Background())
	if len(list) != 1 || list[0].Runs != 0 {
		t.Fatalf("right after the write: %+v, want the run still going", list)
	}
	// The run stops the plugin's unit, so the kernel restarts the plugin:
	// its automation is contributed anew and keeps its status, but is
	// missing from the list while the restart runs.
	s := e.statuses()["agent-spin"] // waits for the queue
	for deadline := time.Now().Add(10 * time.Second); s.Name == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s = e.statuses()["agent-spin"]
	}
	if s.Runs != 1 || s.Failures != 1 || !strings.Contains(s.LastError, "ran past its limit of 2s") {
		t.Fatalf("after the run: %+v", s)
	}
	e.write(cleo, id, map[string]any{"amount": 2}) // the kernel keeps serving
}

// TestAutomationCallsAMethod: a create automation calls a model method
// on the new records that match its filter, acting for the writer. Seen
// failing with the method action calling nothing (the invoice stayed a
// draft).
func TestAutomationCallsAMethod(t *testing.T) {
	e := boot(t, options{plugins: []kernel.Plugin{rules(automation.Automation{Name: "free-is-paid", Model: "invoice",
		Trigger: automation.OnCreate, Filter: orm.Domain{[]any{"amount", "=", 0}},
		Action: automation.Action{Kind: automation.ActMethod, Method: "pay"}})}})
	cleo := e.user("cleo", "clerks")
	free, billed := e.create(cleo, map[string]any{"number": "F-1", "amount": 0}), e.create(cleo, map[string]any{"number": "B-1", "amount": 9})
	recs, err := e.ormService().Read(orm.Sudo(context.Background()), "invoice", []int64{free, billed}, orm.ReadSpec{"state": nil, orm.FieldUpdatedBy: nil})
	if err != nil {
		t.Fatal(err)
	}
	if recs[0]["state"] != "paid" || recs[1]["state"] != "draft" || recs[0][orm.FieldUpdatedBy] != int64(2) {
		t.Fatalf("invoices = %v; want the free one paid by cleo (user 2) and the other a draft", recs)
	}
}

// watcher is an agent automation on every invoice write, without a
// filter, that notes on invoice 1 which records it was told about.
const watcher = `export default async function activate(cap) {
  await cap.contribute('automation', {name: 'agent-watcher', model: 'invoice', trigger: 'write',
    action: {kind: 'handler', handler: async (ev) => {
      await cap.invoke('orm-user', 'write', 'invoice', [1], {note: 'saw ' + ev.ids.join(',') + ' ' + Object.keys(ev.tracked || {}).join(',')})
    }}})
}`

// TestAgentAutomationSeesOnlyItsUsersRecords: an agent's automation with
// no filter is still told only of the records its requester may read, so
// another user's writes never reach its handler; and it may not run on
// unlink, where that cannot be checked. Seen failing with the narrowing
// applied only when a filter was given (the handler saw carl's invoice).
func TestAgentAutomationSeesOnlyItsUsersRecords(t *testing.T) {
	e := boot(t, options{plugins: []kernel.Plugin{tracked()}, turns: [][]contracts.Block{
		{toolUse("plugin_define", map[string]any{"manifest": map[string]any{"id": "agent.watcher", "version": "1",
			"inject": []string{orm.UserKey}, "scopes": []string{"db.write"}, "points": []string{automation.Point}}, "code": watcher})},
		text("defined"),
	}})
	cleo, carl := e.user("cleo", "clerks"), e.user("carl", "clerks")
	mine, theirs := e.create(cleo, map[string]any{"number": "C-1"}), e.create(carl, map[string]any{"number": "K-1"})
	if mine != 1 {
		t.Fatalf("cleo's invoice is %d, want 1", mine)
	}
	// cleo asks for it, so it acts for her.
	if r := e.Do("POST", "/api/chat", map[string]any{"session": "s", "text": "watch my invoices"}, cleo); r.Status != 200 || !strings.Contains(string(r.Body), `\"mounted\"`) {
		t.Fatalf("define: %d %s", r.Status, r.Body)
	}
	e.write(carl, theirs, map[string]any{"amount": 5})
	note := func() any {
		_ = e.statuses()
		recs, err := e.ormService().Read(orm.Sudo(context.Background()), "invoice", []int64{mine}, orm.ReadSpec{"note": nil})
		if err != nil {
			t.Fatal(err)
		}
		return recs[0]["note"]
	}
	if got := note(); got != nil {
		t.Fatalf("after carl's write, cleo's automation noted %v", got)
	}
	e.write(cleo, mine, map[string]any{"amount": 7})
	if got := note(); got != "saw 1 1" {
		t.Fatalf("after cleo's write, the note is %v, want %q", got, "saw 1 1")
	}
	r := e.Do("POST", "/api/plugins", map[string]any{"code": "export default async function activate(cap) {}", "manifest": map[string]any{
		"id": "agent.gone", "version": "1", "contributes": map[string]any{automation.Point: []any{map[string]any{"name": "gone", "model": "invoice",
			"trigger": "unlink", "action": map[string]any{"kind": "note", "body": "x"}}}}}}, bearer(token))
	if r.Status != 200 || !strings.Contains(string(r.Body), "cannot run on unlink") {
		t.Fatalf("an agent's unlink automation: %d %s", r.Status, r.Body)
	}
}

// TestAgentAutomationMethodNeedsWrite: an agent's automation calls a
// model method as agent code would, on records its requester may write:
// one it may only read is refused. Seen failing with the method called
// through the system Service (carl's invoice was closed for cleo).
func TestAgentAutomationMethodNeedsWrite(t *testing.T) {
	closer := map[string]any{"id": "agent.closer", "version": "1", "scopes": []string{"db.write"}, "contributes": map[string]any{automation.Point: []any{
		map[string]any{"name": "closer", "model": "invoice", "trigger": "write", "watch": []string{"amount"},
			"action": map[string]any{"kind": "method", "method": "close"}}}}}
	e := boot(t, options{plugins: []kernel.Plugin{draftsReadable()}, turns: [][]contracts.Block{
		{toolUse("plugin_define", map[string]any{"manifest": closer, "code": "export default async function activate(cap) {}"})},
		text("defined"),
	}})
	cleo, carl := e.user("cleo", "clerks"), e.user("carl", "clerks")
	theirs := e.create(carl, map[string]any{"number": "K-1"})
	if r := e.Do("POST", "/api/chat", map[string]any{"session": "s", "text": "close invoices"}, cleo); r.Status != 200 || !strings.Contains(string(r.Body), `\"mounted\"`) {
		t.Fatalf("define: %d %s", r.Status, r.Body)
	}
	e.write(carl, theirs, map[string]any{"amount": 3})
	st := e.statuses()["closer"]
	recs, _ := e.ormService().Read(orm.Sudo(context.Background()), "invoice", []int64{theirs}, orm.ReadSpec{"state": nil})
	if recs[0]["state"] != "draft" || st.Failures != 1 || !strings.Contains(st.LastError, "may not be written") {
		t.Fatalf("carl's invoice is %v and the automation %+v; want it left a draft and the run refused", recs[0]["state"], st)
	}
}

// TestAgentAutomationWriteNeedsTheCapability: an automation that writes
// records (a write or method action) needs db.write like cap.invoke's
// writes do: without it in the plugin's scopes the mount is refused,
// naming it. Seen failing (mounted) with the automation's checkWrite
// removed.
func TestAgentAutomationWriteNeedsTheCapability(t *testing.T) {
	writer := map[string]any{"id": "agent.writer", "version": "1", "contributes": map[string]any{automation.Point: []any{
		map[string]any{"name": "writer", "model": "invoice", "trigger": "write", "watch": []string{"amount"},
			"action": map[string]any{"kind": "write", "values": map[string]any{"state": "paid"}}}}}}
	e := boot(t, options{turns: [][]contracts.Block{
		{toolUse("plugin_define", map[string]any{"manifest": writer, "code": "export default async function activate(cap) {}"})},
		text("defined"),
	}})
	cleo := e.user("cleo", "clerks")
	r := e.Do("POST", "/api/chat", map[string]any{"session": "s", "text": "mark invoices paid"}, cleo)
	if r.Status != 200 || !strings.Contains(string(r.Body), `\"rejected\"`) || !strings.Contains(string(r.Body), "needs the db.write capability") {
		t.Fatalf("define: %d %s; want rejected naming db.write", r.Status, r.Body)
	}
}
