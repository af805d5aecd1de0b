package adminapi

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/agentloop"
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/scheduler"
)

// sameJSON fails unless the kernel's view and its wire form encode alike:
// the conversion neither drops nor renames a field.
func sameJSON(t *testing.T, what string, view, wire any) {
	t.Helper()
	a, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(wire)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("%s:\nkernel %s\nwire   %s", what, a, b)
	}
}

var fullManifest = kernel.Manifest{ID: "agent.x", Version: "2", Description: "d", Inject: []string{"a"},
	Optional: []string{"b"}, Provide: []string{"c"}, Scopes: []string{"net"}, Points: []string{"route"},
	Contributes: map[string][]any{"schedule": {map[string]any{"name": "j", "everyMs": 1000.0}}}}

var fullVerdict = judge.Verdict{Status: judge.StatusRejected, PluginID: "agent.x", Version: "2", CodeHash: "sha256:00",
	Gate: judge.GatePolicy, Reason: "r", ApprovalID: "ap", RolledBack: true, Restored: "1", Retry: true}

// Every field of every view, set, encodes the same through wire.go as
// the kernel encodes it itself. Seen failing with wireFiber leaving out
// Held, and wireVerdict leaving out Retry.
func TestWireKeepsEveryField(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	fiber := kernel.FiberView{ID: "agent.x", Version: "2", Description: "d", Trust: kernel.TrustAgent, Enabled: true,
		State: kernel.StateFailed, Error: "e", CodeHash: "sha256:00", Staged: true, Points: []string{"route"},
		Inject: []kernel.Dependency{{Key: "a", Present: true}}, Optional: []kernel.Dependency{}, Provides: []string{"c"},
		Scopes: []string{"net"}, Effects: 3, Held: true, RequestedBy: "ada", Quarantine: "quarantined: q", SafeMode: true,
		Capabilities: []string{"db.read", "net"}}
	sameJSON(t, "fiber", fiber, wireFiber(fiber))
	sameJSON(t, "system fiber", kernel.FiberView{Trust: kernel.TrustSystem}, wireFiber(kernel.FiberView{Trust: kernel.TrustSystem}))
	sameJSON(t, "manifest", fullManifest, wireManifest(fullManifest))
	tr := kernel.TransitionView{Plugin: "agent.x", FromVersion: "1", From: "sha256:01", ToVersion: "2", To: "sha256:02",
		Phase: kernel.PhaseAborted, Began: now, Ended: now, Switched: true, Committed: true, Draining: 1, InFlight: 2, Reason: "r"}
	sameJSON(t, "transition", tr, wireTransition(tr))
	sameJSON(t, "verdict", fullVerdict, wireVerdict(fullVerdict))
	approval := judge.Approval{ID: "ap", PluginID: "agent.x", Version: "2", CodeHash: "sha256:00", Manifest: fullManifest,
		Code: "c", RequestedBy: "ada", Reasons: []string{"route"}, Requested: now,
		Capabilities: []string{"http.route"}, Grant: []string{"*"},
		Decisions: []judge.Decision{{By: "bo", At: now, Groups: []string{"leads"}}},
		Replaces:  &judge.Replaced{Version: "1", CodeHash: "sha256:01", Manifest: fullManifest, CodeDiff: "-a\n+b\n", Note: "n"}}
	wired := wireApprovals([]judge.Approval{approval})
	if r := wired[0].Replaces; r == nil || len(r.Declaration.Points) != 2 || !reflect.DeepEqual(r.Added, adminv1.Declaration{}) {
		t.Errorf("replaced = %+v, want the old declaration and no changes (the same manifest)", r)
	} else {
		r.Declaration = adminv1.Declaration{} // the wire's own additions
	}
	if d := wired[0].Declaration; len(d.Points) != 2 || len(d.Schedules) != 1 || d.Schedules[0] != "j every 1s" {
		t.Errorf("approval declaration = %+v, want adminv1.DeclarationOf of its manifest", d)
	}
	wired[0].Declaration = adminv1.Declaration{} // the wire's own addition
	sameJSON(t, "approvals", []judge.Approval{approval}, wired)
	sameJSON(t, "no approvals", []judge.Approval(nil), wireApprovals(nil))
	event := kernel.Event{Seq: 7, Type: "t", Plugin: "p", Time: now, Data: json.RawMessage(`{"a":1}`)}
	sameJSON(t, "events", []kernel.Event{event}, wireEvents([]kernel.Event{event}))
	routes := []smshttp.RouteInfo{{Method: "GET", Path: "/x", Plugin: "p", Scope: smshttp.ScopeRead}}
	sameJSON(t, "routes", routes, wireRoutes(routes))
	colls := []collections.Collection{{Name: "n", Public: true, Fields: []collections.Field{
		{Name: "f", Type: collections.TypeText, Required: true, Default: "x"}}}}
	sameJSON(t, "collections", colls, wireCollections(colls))
	catalog := kernel.Catalog{
		Keys: []kernel.KeyView{{Name: "k", Defined: true, Definer: "d", Provider: "p",
			Meta: kernel.KeyMeta{Description: "m", MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustAgent}}},
		Points: []kernel.PointView{{Name: "route", Definer: "d", Contributions: []string{"p"},
			Meta: kernel.PointMeta{Description: "m", MinContributorTrust: kernel.TrustSystem}}}}
	sameJSON(t, "catalog", catalog, wireCatalog(catalog))
	step := agentloop.Step{ID: "s", Tool: "t", Input: json.RawMessage(`{}`), Result: "r", IsError: true}
	reply := agentloop.Reply{Reply: "r", Steps: []agentloop.Step{step}}
	sameJSON(t, "reply", reply, wireReply(reply))
	ev := agentloop.Event{Type: agentloop.EventDone, Text: "t", Step: &step, Verdict: &fullVerdict, Reply: &reply, Error: "e"}
	sameJSON(t, "chat event", ev, wireChatEvent(ev))
}

// adminv1.HashCode is the kernel's hash, so the operator binds decisions
// to the code hash the kernel computes.
func TestHashCodeAgrees(t *testing.T) {
	for _, code := range []string{"", "export default async function activate(cap) {}", "ü\x00\n"} {
		if a, b := adminv1.HashCode([]byte(code)), kernel.HashCode([]byte(code)); a != b {
			t.Errorf("HashCode(%q) = %s, the kernel's %s", code, a, b)
		}
	}
}

// adminv1's names are the kernel's, the judge's and the plugins'.
func TestNamesAgree(t *testing.T) {
	pairs := [][2]string{
		{string(adminv1.StatusMounted), string(judge.StatusMounted)},
		{string(adminv1.StatusPending), string(judge.StatusPending)},
		{string(adminv1.StatusRejected), string(judge.StatusRejected)},
		{adminv1.GateManifest, judge.GateManifest}, {adminv1.GateTrust, judge.GateTrust}, {adminv1.GateLint, judge.GateLint},
		{adminv1.GateLoad, judge.GateLoad}, {adminv1.GatePolicy, judge.GatePolicy}, {adminv1.GateApproval, judge.GateApproval},
		{adminv1.GateMount, judge.GateMount}, {adminv1.GateInvariant, judge.GateInvariant},
		{adminv1.EventSubmitted, judge.EventSubmitted}, {adminv1.EventRejected, judge.EventRejected},
		{adminv1.EventPending, judge.EventPending}, {adminv1.EventApproved, judge.EventApproved},
		{adminv1.EventDenied, judge.EventDenied}, {adminv1.EventSuperseded, judge.EventSuperseded},
		{adminv1.EventMounted, judge.EventMounted}, {adminv1.EventRolledBack, judge.EventRolledBack},
		{string(adminv1.StateInactive), string(kernel.StateInactive)}, {string(adminv1.StateLoading), string(kernel.StateLoading)},
		{string(adminv1.StateActive), string(kernel.StateActive)}, {string(adminv1.StateUnloading), string(kernel.StateUnloading)},
		{string(adminv1.StateFailed), string(kernel.StateFailed)},
		{adminv1.TrustAgent.String(), kernel.TrustAgent.String()}, {adminv1.TrustSystem.String(), kernel.TrustSystem.String()},
		{adminv1.ChatTextDelta, agentloop.EventTextDelta}, {adminv1.ChatThinkingDelta, agentloop.EventThinkingDelta}, {adminv1.ChatToolCall, agentloop.EventToolCall},
		{adminv1.ChatToolResult, agentloop.EventToolResult}, {adminv1.ChatVerdict, agentloop.EventVerdict},
		{adminv1.ChatDone, agentloop.EventDone}, {adminv1.ChatError, agentloop.EventError},
		{adminv1.RoutePoint, smshttp.RoutePoint}, {adminv1.SchedulePoint, scheduler.SchedulePoint},
		{adminv1.KindValidation, string(smshttp.KindValidation)}, {adminv1.KindAuth, string(smshttp.KindAuth)},
		{adminv1.KindForbidden, string(smshttp.KindForbidden)}, {adminv1.KindNotFound, string(smshttp.KindNotFound)},
		{adminv1.KindConflict, string(smshttp.KindConflict)}, {adminv1.KindTooLarge, string(smshttp.KindTooLarge)},
		{adminv1.KindTooMany, string(smshttp.KindTooMany)}, {adminv1.KindInternal, string(smshttp.KindInternal)},
		{adminv1.KindUnavailable, string(smshttp.KindUnavailable)},
	}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("adminv1 names %q where the kernel names %q", p[0], p[1])
		}
	}
	if adminv1.DefaultMaxPendingPerRequester != judge.DefaultMaxPendingPerRequester {
		t.Errorf("DefaultMaxPendingPerRequester = %d, the judge's %d", adminv1.DefaultMaxPendingPerRequester, judge.DefaultMaxPendingPerRequester)
	}
	m := adminv1.Manifest(fullManifest)
	km := fullManifest
	if a, b := m.DeclaredPoints(), km.DeclaredPoints(); len(a) != len(b) || a[0] != b[0] || a[1] != b[1] {
		t.Errorf("DeclaredPoints = %v, the kernel's %v", a, b)
	}
}
