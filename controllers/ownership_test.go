package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// notesCode is agent.notes at a version: the code differs per version.
func notesCode(version string) string {
	return fmt.Sprintf("export default async function activate(cap) { /* notes v%s */ }", version)
}

// agentTurn is a scripted model turn calling one built-in tool, and the
// turn after it that ends the chat.
func agentTurn(tool string, input map[string]any) []any {
	return []any{
		[]any{map[string]any{"type": "tool_use", "name": tool, "input": input}},
		[]any{map[string]any{"type": "text", "text": "done"}},
	}
}

// scriptedTenant applies a Tenant whose agent replays script, and waits
// until it is Ready.
func (w *world) scriptedTenant(name string, script []any) {
	w.t.Helper()
	raw, err := json.Marshal(script)
	w.must(err)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-model", Namespace: w.ns},
		Data: map[string]string{"script.json": string(raw)}}
	w.must(w.admin.Create(context.Background(), cm))
	t := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}, Spec: smsv1.TenantSpec{
		Model: &smsv1.TenantModel{Provider: "scripted", ScriptConfigMapRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}, Key: "script.json"}}}}
	w.must(w.admin.Create(context.Background(), t))
	w.eventually("tenant "+name+" Ready", func() error {
		if err := w.admin.Get(context.Background(), w.key(name), t); err != nil {
			return err
		}
		return condIs(t.Status.Conditions, smsv1.ConditionReady, true)
	})
}

// setScript replaces the scripted model's remaining turns. A kernel reads
// its script when it starts, so this takes effect at the next restart
// (which starts the script over).
func (w *world) setScript(tenant string, script []any) {
	w.t.Helper()
	raw, err := json.Marshal(script)
	w.must(err)
	var cm corev1.ConfigMap
	w.must(w.admin.Get(context.Background(), w.key(tenant+"-model"), &cm))
	cm.Data["script.json"] = string(raw)
	w.must(w.admin.Update(context.Background(), &cm))
}

// say sends one chat message with the chat credential people hold.
func (w *world) say(kc *adminv1.Client, text string) {
	w.t.Helper()
	w.must(kc.ChatStream(context.Background(), "owner", text, func(adminv1.ChatEvent) error { return nil }))
}

// waitSpec waits until the Plugin's spec satisfies ok.
func (w *world) waitSpec(name, what string, ok func(*smsv1.Plugin) bool) *smsv1.Plugin {
	w.t.Helper()
	var p smsv1.Plugin
	w.eventually(name+": "+what, func() error {
		if err := w.admin.Get(context.Background(), w.key(name), &p); err != nil {
			return err
		}
		if !ok(&p) {
			return fmt.Errorf("spec %+v enabled %v", p.Spec.Version, p.Spec.Enabled)
		}
		return nil
	})
	return &p
}

// poke makes the operator reconcile the Plugin (and its tenant) again a
// few times, by changing a label nobody reads, then lets it settle.
func (w *world) poke(name string) {
	w.t.Helper()
	for i := range 3 {
		var p smsv1.Plugin
		w.must(w.admin.Get(context.Background(), w.key(name), &p))
		patch := client.MergeFrom(p.DeepCopy())
		p.Labels["poke"] = strconv.Itoa(i)
		w.must(w.admin.Patch(context.Background(), &p, patch))
		time.Sleep(300 * time.Millisecond)
	}
	time.Sleep(time.Second)
}

// fiberIs fails the test unless the kernel runs plugin id at version,
// enabled as wanted.
func (w *world) fiberIs(tenant, id, version string, enabled bool) {
	w.t.Helper()
	s, err := w.kernel(tenant).PluginStatus(context.Background(), id)
	w.must(err)
	if s.Fiber == nil || s.Fiber.Version != version || s.Fiber.Enabled != enabled {
		w.t.Fatalf("kernel runs %+v, want version %s enabled %t", s.Fiber, version, enabled)
	}
}

func enabledIs(want bool) func(*smsv1.Plugin) bool {
	return func(p *smsv1.Plugin) bool { return p.Spec.Enabled != nil && *p.Spec.Enabled == want }
}

// TestAgentChangesStay: what the agent does to its own plugin through
// chat (a new version, disable, enable, uninstall) shows in the Plugin
// object within seconds, and stays: several reconciles and an operator
// restart later the kernel still runs what the agent made it run. Seen
// failing with the mirror only creating Plugins: the spec stayed at
// version 1, and the next reconcile submitted version 1 again; and with the
// mirror's updates a server-side apply after a create: version 1's
// description stayed in the spec, and version 2 was resubmitted with it.
func TestAgentChangesStay(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	define := func(version string) map[string]any {
		m := map[string]any{"id": "agent.notes", "version": version}
		if version == "1" {
			m["description"] = "first notes" // version 2 drops it
		}
		return map[string]any{"manifest": m, "code": notesCode(version)}
	}
	id := map[string]any{"id": "agent.notes"}
	turns := func(calls ...[]any) []any {
		var out []any
		for _, c := range calls {
			out = append(out, c...)
		}
		return out
	}
	disable, enable, uninstall := agentTurn("plugin_disable", id), agentTurn("plugin_enable", id), agentTurn("plugin_uninstall", id)
	w.scriptedTenant("acme", turns(agentTurn("plugin_define", define("1")), agentTurn("plugin_define", define("2"))))
	chat := w.chatKernel("acme")
	const name = "acme-agent-notes"

	w.say(chat, "add a notes plugin")
	w.waitPlugin(name, map[string]bool{smsv1.ConditionReady: true})

	w.say(chat, "ship version 2")
	w.waitSpec(name, "version 2, without version 1's description", func(p *smsv1.Plugin) bool {
		return p.Spec.Version == "2" && *p.Spec.Code == notesCode("2") && p.Spec.Description == ""
	})
	w.waitPlugin(name, map[string]bool{smsv1.ConditionReady: true})
	w.poke(name)
	w.setScript("acme", turns(disable, enable, uninstall))
	w.restart()
	chat = w.chatKernel("acme")
	w.poke(name)
	w.fiberIs("acme", "agent.notes", "2", true)

	w.say(chat, "disable it")
	w.waitSpec(name, "disabled", enabledIs(false))
	w.poke(name)
	w.setScript("acme", turns(enable, uninstall))
	w.restart()
	chat = w.chatKernel("acme")
	w.poke(name)
	w.fiberIs("acme", "agent.notes", "2", false)
	w.waitPlugin(name, map[string]bool{smsv1.ConditionReady: true, smsv1.ConditionMounted: false})

	w.say(chat, "enable it again")
	w.waitSpec(name, "enabled", enabledIs(true))
	w.poke(name)
	w.fiberIs("acme", "agent.notes", "2", true)

	w.say(chat, "remove it")
	w.eventually("the Plugin of the uninstalled plugin is gone", func() error {
		var p smsv1.Plugin
		if err := w.admin.Get(context.Background(), w.key(name), &p); err == nil {
			return fmt.Errorf("still there (deleting: %v)", !p.DeletionTimestamp.IsZero())
		}
		return nil
	})
	w.restart()
	time.Sleep(2 * time.Second)
	if _, err := w.kernel("acme").PluginStatus(context.Background(), "agent.notes"); !adminv1.IsNotFound(err) {
		t.Fatalf("the kernel has agent.notes again after the agent uninstalled it: %v", err)
	}
	counts := w.kernelEvents("acme")
	if got := counts[adminv1.EventSubmitted+" agent.notes"]; got != 2 {
		t.Errorf("agent.notes was submitted %d times, want 2 (the agent's two versions only)", got)
	}
}

// TestPersonWinsOverAgentPlugin: a person who edits an agent-made Plugin
// wins. Disabling it disables the plugin in the kernel, and new code
// replaces the agent's; both stay through reconciles and a restart, the
// Plugin records who changed it, and the mirror does not copy the
// kernel's older state back over the edit. Seen failing with the Plugin
// reconciler never pushing an agent-made spec (the kernel kept running
// the agent's code, enabled).
func TestPersonWinsOverAgentPlugin(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{})
	alice := w.user("alice", false)
	ctx := context.Background()
	_, err := w.kernel("acme").Submit(ctx, adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "1"}, Code: notesCode("1")}, "agent")
	w.must(err)
	const name = "acme-agent-notes"
	w.waitPlugin(name, map[string]bool{smsv1.ConditionReady: true})
	w.waitSpec(name, "annotated by the mirror", func(p *smsv1.Plugin) bool { return p.Annotations[smsv1.AnnotationKernelSubmission] != "" })

	edit := func(change func(*smsv1.Plugin)) {
		var p smsv1.Plugin
		w.must(alice.Get(ctx, w.key(name), &p))
		patch := client.MergeFrom(p.DeepCopy())
		change(&p)
		w.must(alice.Patch(ctx, &p, patch))
	}
	edit(func(p *smsv1.Plugin) { off := false; p.Spec.Enabled = &off })
	w.eventually("the kernel disabled agent.notes", func() error {
		s, err := w.kernel("acme").PluginStatus(ctx, "agent.notes")
		if err != nil || s.Fiber == nil || s.Fiber.Enabled {
			return fmt.Errorf("fiber %+v, %w", s.Fiber, err)
		}
		return nil
	})
	w.poke(name)
	w.restart()
	w.poke(name)
	w.fiberIs("acme", "agent.notes", "1", false)
	p := w.waitSpec(name, "still disabled", enabledIs(false))
	if p.Annotations[smsv1.AnnotationRequestedBy] != "alice" {
		t.Errorf("requested-by = %q, want alice", p.Annotations[smsv1.AnnotationRequestedBy])
	}

	edit(func(p *smsv1.Plugin) { code := notesCode("2"); p.Spec.Code = &code; p.Spec.Version = "2" })
	w.eventually("the kernel runs alice's version 2", func() error {
		s, err := w.kernel("acme").PluginStatus(ctx, "agent.notes")
		if err != nil || s.Fiber == nil || s.Fiber.Version != "2" {
			return fmt.Errorf("fiber %+v, %w", s.Fiber, err)
		}
		return nil
	})
	w.poke(name)
	w.restart()
	w.poke(name)
	w.fiberIs("acme", "agent.notes", "2", false)
	w.waitSpec(name, "version 2 kept", func(p *smsv1.Plugin) bool { return p.Spec.Version == "2" && *p.Spec.Code == notesCode("2") })
}

// The mirror never takes over a Plugin it did not make: when the name it
// would give an agent plugin is taken by a person's Plugin (for another
// id), that Plugin keeps its spec and the agent plugin is not mirrored.
// Two layers keep it: the mirror creates rather than applies a Plugin it
// has none of, and the CRD keeps spec.id immutable. Seen failing with both
// removed (the person's Plugin was rewritten to agent.notes); with only the
// create gone, the failed apply aborted the tenant's mirror pass instead.
func TestMirrorTakesNoNameOver(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{})
	w.plugin(w.admin, "acme-agent-notes", "agent.mine", quietCode)
	w.waitPlugin("acme-agent-notes", map[string]bool{smsv1.ConditionReady: true})
	_, err := w.kernel("acme").Submit(context.Background(), adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "1"}, Code: notesCode("1")}, "agent")
	w.must(err)
	time.Sleep(2 * time.Second) // the mirror's turn, through the event stream
	var p smsv1.Plugin
	w.must(w.admin.Get(context.Background(), w.key("acme-agent-notes"), &p))
	if p.Spec.ID != "agent.mine" || p.Labels[smsv1.LabelOrigin] != "" {
		t.Fatalf("the person's Plugin became %s (origin %q)", p.Spec.ID, p.Labels[smsv1.LabelOrigin])
	}
}

// A person's disable applies to the version the kernel runs even while a
// newer agent version waits for approval, and stays after that version is
// denied. Seen failing with the toggle made only when the spec's own code
// was mounted: the kernel kept running version 1 enabled for good.
func TestPersonDisablesWhileNewVersionWaits(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{})
	alice, bob := w.user("alice", false), w.user("bob", true)
	ctx := context.Background()
	kc := w.kernel("acme")
	_, err := kc.Submit(ctx, adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "1"}, Code: notesCode("1")}, "agent")
	w.must(err)
	const name = "acme-agent-notes"
	w.waitPlugin(name, map[string]bool{smsv1.ConditionReady: true})
	_, err = kc.Submit(ctx, adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "2", Points: []string{"route"}}, Code: routeCode}, "agent")
	w.must(err)
	p := w.waitSpec(name, "version 2 waits", func(p *smsv1.Plugin) bool { return p.Spec.Version == "2" && p.Status.ApprovalRef != nil })

	var cur smsv1.Plugin
	w.must(alice.Get(ctx, w.key(name), &cur))
	patch := client.MergeFrom(cur.DeepCopy())
	off := false
	cur.Spec.Enabled = &off
	w.must(alice.Patch(ctx, &cur, patch))
	w.eventually("the kernel disabled version 1", func() error {
		s, err := kc.PluginStatus(ctx, "agent.notes")
		if err != nil || s.Fiber == nil || s.Fiber.Version != "1" || s.Fiber.Enabled {
			return fmt.Errorf("fiber %+v, %w", s.Fiber, err)
		}
		return nil
	})
	w.must(w.decide(bob, p.Status.ApprovalRef.Name, smsv1.DecisionDenied))
	w.poke(name)
	w.fiberIs("acme", "agent.notes", "1", false)
}
