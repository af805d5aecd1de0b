package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

const (
	quietCode = `export default async function activate(cap) {}`
	routeCode = `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/hi', handler: async () => ({ body: 'hi' }) })
}`
	routeCode2 = `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/hi', handler: async () => ({ body: 'hello' }) })
}`
	importCode = "import fs from 'fs'\nexport default async function activate(cap) {}"
)

// A Tenant becomes Ready with an endpoint its kernel answers on.
func TestTenantReady(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	tn := w.tenant("acme", smsv1.TenantJudge{})
	if tn.Status.Endpoint == "" || tn.Status.ObservedGeneration != tn.Generation {
		t.Fatalf("status = %+v, want an endpoint and the observed generation", tn.Status)
	}
	s, err := w.kernel("acme").State(context.Background())
	if err != nil || s.Auth != adminv1.AuthToken {
		t.Fatalf("kernel at %s: auth %q, %v; want its admin API behind the token", tn.Status.Endpoint, s.Auth, err)
	}
}

// A plugin with nothing sensitive mounts at once; a rejected one names its
// gate; deleting a plugin uninstalls it from the kernel.
func TestPluginVerdicts(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{})
	w.plugin(w.admin, "quiet", "agent.quiet", quietCode)
	p := w.waitPlugin("quiet", map[string]bool{smsv1.ConditionJudged: true, smsv1.ConditionMounted: true, smsv1.ConditionReady: true})
	if p.Status.Verdict.Result != "mounted" || p.Status.Origin != smsv1.OriginGit || p.Status.CodeHash != adminv1.HashCode([]byte(quietCode)) {
		t.Fatalf("status = %+v", p.Status)
	}

	w.plugin(w.admin, "bad", "agent.bad", importCode)
	bad := w.waitPlugin("bad", map[string]bool{smsv1.ConditionJudged: false, smsv1.ConditionReady: false})
	if c := meta.FindStatusCondition(bad.Status.Conditions, smsv1.ConditionJudged); c.Reason != "GateLint" {
		t.Fatalf("Judged = %s: %s, want reason GateLint", c.Reason, c.Message)
	}

	w.must(w.admin.Delete(context.Background(), p))
	kc := w.kernel("acme")
	w.eventually("quiet uninstalled", func() error {
		s, err := kc.State(context.Background())
		if err != nil {
			return err
		}
		for _, f := range s.Fibers {
			if f.ID == "agent.quiet" {
				return fmt.Errorf("quiet is still installed (%s)", f.State)
			}
		}
		return nil
	})
}

// A sensitive plugin waits for an Approval; only an authorised user who is
// not the requester (under forbidSelfApproval) can approve it, and then it
// mounts. New code expires the old Approval and asks again. Seen failing
// when the approval controller judged staleness by the Plugin's status:
// the new code's Approval was expired as stale the moment it was created,
// before the status caught up, and could never be decided. The new code's
// Approval shows what it replaces; seen failing with the operator leaving
// out spec.replaces.
func TestApprovalFlow(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{ForbidSelfApproval: true})
	alice, bob, carol := w.user("alice", true), w.user("bob", true), w.user("carol", false)
	w.plugin(alice, "hello", "agent.hello", routeCode)
	p := w.waitPlugin("hello", map[string]bool{smsv1.ConditionJudged: true, smsv1.ConditionApproved: false, smsv1.ConditionReady: false})
	if p.Status.ApprovalRef == nil {
		t.Fatalf("no approvalRef in %+v", p.Status)
	}
	a := w.approval(p.Status.ApprovalRef.Name)
	if a.Spec.RequestedBy != "alice" || a.Spec.CodeHash != p.Status.CodeHash {
		t.Fatalf("approval spec = %+v, want requested by alice for %s", a.Spec, p.Status.CodeHash)
	}

	if err := w.decide(carol, a.Name, smsv1.DecisionApproved); err == nil || !strings.Contains(err.Error(), `needs verb "approve"`) {
		t.Fatalf("carol's approval: %v, want a refusal naming the approve verb", err)
	}
	if err := w.decide(alice, a.Name, smsv1.DecisionApproved); err == nil || !strings.Contains(err.Error(), "self-approval") {
		t.Fatalf("alice's self-approval: %v, want a refusal naming self-approval", err)
	}
	w.must(w.decide(bob, a.Name, smsv1.DecisionApproved))
	w.waitPlugin("hello", map[string]bool{smsv1.ConditionApproved: true, smsv1.ConditionMounted: true, smsv1.ConditionReady: true})
	a = w.approval(a.Name)
	if a.Status.DecidedBy != "bob" || a.Status.DecidedAt == nil {
		t.Fatalf("approval status = %+v, want decided by bob", a.Status)
	}

	w.setCode(alice, "hello", routeCode2)
	p = w.waitPlugin("hello", map[string]bool{smsv1.ConditionApproved: false, smsv1.ConditionMounted: true, smsv1.ConditionReady: false})
	if p.Status.ApprovalRef == nil || p.Status.ApprovalRef.Name == a.Name {
		t.Fatalf("approvalRef = %v, want a new Approval; status %+v", p.Status.ApprovalRef, p.Status)
	}
	// The new Approval shows what it replaces: the mounted code, and the
	// diff to the new code (the declaration is the same).
	r := w.approval(p.Status.ApprovalRef.Name).Spec.Replaces
	if r == nil || r.CodeHash != adminv1.HashCode([]byte(routeCode)) || r.Added != nil || r.Removed != nil ||
		!strings.Contains(r.CodeDiff, "-  await cap.contribute('route', { method: 'GET', path: '/hi', handler: async () => ({ body: 'hi' }) })") ||
		!strings.Contains(r.CodeDiff, "+  await cap.contribute('route', { method: 'GET', path: '/hi', handler: async () => ({ body: 'hello' }) })") {
		t.Fatalf("spec.replaces = %+v, want the mounted version and the diff of its code", r)
	}
	w.eventually("old approval Expired", func() error {
		return condIs(w.approval(a.Name).Status.Conditions, smsv1.ConditionExpired, true)
	})
}

// A decision on an Approval whose code changed since is never applied to
// the new code: the Approval expires instead.
func TestStaleApprovalExpires(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{})
	bob := w.user("bob", true)
	w.plugin(w.admin, "hello", "agent.hello", routeCode)
	p := w.waitPlugin("hello", map[string]bool{smsv1.ConditionApproved: false})
	old := p.Status.ApprovalRef.Name
	w.setCode(w.admin, "hello", routeCode2)
	w.eventually("old approval Expired", func() error {
		return condIs(w.approval(old).Status.Conditions, smsv1.ConditionExpired, true)
	})
	if c := meta.FindStatusCondition(w.approval(old).Status.Conditions, smsv1.ConditionExpired); c.Reason != smsv1.ReasonCodeChanged {
		t.Fatalf("Expired reason %s, want %s", c.Reason, smsv1.ReasonCodeChanged)
	}
	w.must(w.decide(bob, old, smsv1.DecisionApproved))
	p = w.waitPlugin("hello", map[string]bool{smsv1.ConditionApproved: false, smsv1.ConditionMounted: false})
	if p.Status.ApprovalRef == nil || p.Status.ApprovalRef.Name == old {
		t.Fatalf("approvalRef = %v, want the new code's Approval", p.Status.ApprovalRef)
	}
	if c := meta.FindStatusCondition(w.approval(old).Status.Conditions, smsv1.ConditionApproved); c != nil && c.Status == "True" {
		t.Fatalf("the stale approval was applied: %+v", c)
	}
}

// A plugin the agent defined inside the kernel appears as a Plugin object
// with origin agent.
func TestAgentPluginMirrored(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{})
	kc := w.kernel("acme")
	v, err := kc.Submit(context.Background(), adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "1"}, Code: quietCode}, "agent")
	if err != nil || v.Status != adminv1.StatusMounted {
		t.Fatalf("submit = %+v, %v", v, err)
	}
	p := w.waitPlugin("acme-agent-notes", map[string]bool{smsv1.ConditionMounted: true, smsv1.ConditionReady: true})
	if p.Status.Origin != smsv1.OriginAgent || p.Spec.ID != "agent.notes" || *p.Spec.Code != quietCode {
		t.Fatalf("mirrored plugin = %+v / %+v", p.Spec, p.Status)
	}
}

func (w *world) approval(name string) *smsv1.Approval {
	w.t.Helper()
	var a smsv1.Approval
	w.must(w.admin.Get(context.Background(), w.key(name), &a))
	return &a
}

// decide sets an Approval's decision as c's user.
func (w *world) decide(c client.Client, name string, d smsv1.Decision) error {
	a := w.approval(name)
	before := a.DeepCopy()
	a.Spec.Decision = d
	return c.Patch(context.Background(), a, client.MergeFrom(before))
}

func (w *world) setCode(c client.Client, name, code string) {
	w.t.Helper()
	var p smsv1.Plugin
	w.must(c.Get(context.Background(), w.key(name), &p))
	before := p.DeepCopy()
	p.Spec.Code = &code
	w.must(c.Patch(context.Background(), &p, client.MergeFrom(before)))
}

// Suspending a tenant stops its kernel and keeps its data: resuming brings
// its plugins back. Deleting the tenant stops the kernel. Seen failing with
// the local runtime ignoring spec.suspend (the kernel kept answering), and
// with status.plugins a struct rather than a pointer (the first merge patch
// left its zero counts out, and every later status write was invalid).
func TestTenantSuspendAndDelete(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{})
	w.plugin(w.admin, "quiet", "agent.quiet", quietCode)
	w.waitPlugin("quiet", map[string]bool{smsv1.ConditionReady: true})
	w.eventually("tenant counts the mounted plugin", func() error {
		var tn smsv1.Tenant
		w.must(w.admin.Get(context.Background(), w.key("acme"), &tn))
		if c := tn.Status.Plugins; c == nil || c.Mounted != 1 || c.Pending != 0 {
			return fmt.Errorf("status.plugins = %+v, want 1 mounted", c)
		}
		return nil
	})
	kc := w.kernel("acme")
	w.patchTenant("acme", func(tn *smsv1.Tenant) { tn.Spec.Suspend = true })
	w.eventually("suspended", func() error {
		var tn smsv1.Tenant
		w.must(w.admin.Get(context.Background(), w.key("acme"), &tn))
		if c := meta.FindStatusCondition(tn.Status.Conditions, smsv1.ConditionReady); c == nil || c.Reason != smsv1.ReasonSuspended {
			return fmt.Errorf("Ready = %+v, want reason Suspended", c)
		}
		if kc.Healthy(context.Background()) == nil {
			return fmt.Errorf("the suspended kernel still answers")
		}
		return nil
	})
	w.patchTenant("acme", func(tn *smsv1.Tenant) { tn.Spec.Suspend = false })
	w.eventually("resumed", func() error {
		var tn smsv1.Tenant
		w.must(w.admin.Get(context.Background(), w.key("acme"), &tn))
		if err := condIs(tn.Status.Conditions, smsv1.ConditionReady, true); err != nil {
			return fmt.Errorf("%w (suspend %v, generation %d, observed %d)", err, tn.Spec.Suspend, tn.Generation, tn.Status.ObservedGeneration)
		}
		return nil
	})
	w.waitPlugin("quiet", map[string]bool{smsv1.ConditionReady: true})
	kc = w.kernel("acme")
	if _, err := kc.Plugin(context.Background(), "agent.quiet"); err != nil {
		t.Fatalf("after resuming, agent.quiet: %v", err)
	}
	var tn smsv1.Tenant
	w.must(w.admin.Get(context.Background(), w.key("acme"), &tn))
	w.must(w.admin.Delete(context.Background(), &tn))
	w.eventually("kernel stopped", func() error {
		if kc.Healthy(context.Background()) == nil {
			return fmt.Errorf("the deleted tenant's kernel still answers")
		}
		return nil
	})
}

func (w *world) patchTenant(name string, change func(*smsv1.Tenant)) {
	w.t.Helper()
	var tn smsv1.Tenant
	w.must(w.admin.Get(context.Background(), w.key(name), &tn))
	before := tn.DeepCopy()
	change(&tn)
	w.must(w.admin.Patch(context.Background(), &tn, client.MergeFrom(before)))
}

// An approval written ahead (kept in git next to the Plugin) by the person
// who then creates the Plugin is a self-approval: under forbidSelfApproval
// it never reaches the kernel, expires with reason SelfApproval, and the
// plugin waits for someone else. The webhook could not refuse it when it
// was written, as the Plugin did not exist. Seen failing without the
// approval controller's check: the plugin mounted on alice's own word.
func TestPreApprovalBySelfRefused(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{ForbidSelfApproval: true})
	alice, bob := w.user("alice", true), w.user("bob", true)
	ctx := context.Background()
	ahead := &smsv1.Approval{ObjectMeta: metav1.ObjectMeta{Name: "hello-ahead", Namespace: w.ns},
		Spec: smsv1.ApprovalSpec{PluginRef: corev1.LocalObjectReference{Name: "hello"}, PluginID: "agent.hello",
			CodeHash: adminv1.HashCode([]byte(routeCode)), Declaration: &smsv1.Declaration{Points: []string{"route"}},
			Decision: smsv1.DecisionApproved}}
	w.must(alice.Create(ctx, ahead))
	w.plugin(alice, "hello", "agent.hello", routeCode)
	w.eventually("the self-approval expired", func() error {
		a := w.approval("hello-ahead")
		c := meta.FindStatusCondition(a.Status.Conditions, smsv1.ConditionExpired)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != smsv1.ReasonSelfApproval {
			return fmt.Errorf("conditions %+v", a.Status.Conditions)
		}
		return nil
	})
	p := w.waitPlugin("hello", map[string]bool{smsv1.ConditionApproved: false, smsv1.ConditionMounted: false})
	if p.Status.ApprovalRef == nil || p.Status.ApprovalRef.Name == "hello-ahead" {
		t.Fatalf("approvalRef = %v, want a new Approval for someone else", p.Status.ApprovalRef)
	}
	w.must(w.decide(bob, p.Status.ApprovalRef.Name, smsv1.DecisionApproved))
	w.waitPlugin("hello", map[string]bool{smsv1.ConditionMounted: true, smsv1.ConditionReady: true})
}

// An Approval nobody decides is denied when the tenant's approvalTTL runs
// out, and the plugin is Stalled until its spec changes. The operator
// resyncs once an hour here: the approval controller requeues itself at
// the deadline. Seen failing with the deadline requeue replaced by the
// resync period (the approval still waited after 30 s). The denial is
// the plugin's last word: the kernel holds no request for it and no other
// Approval asks. Seen failing with the Plugin reconciler reading the
// Approval from its cache only (settled): it saw the kernel's request gone
// before the denial, submitted the code again, and every TTL asked anew.
func TestApprovalTTLDenies(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{ApprovalTTL: &metav1.Duration{Duration: 3 * time.Second}})
	w.plugin(w.admin, "hello", "agent.hello", routeCode)
	p := w.waitPlugin("hello", map[string]bool{smsv1.ConditionApproved: false, smsv1.ConditionReconciling: true})
	name := p.Status.ApprovalRef.Name
	w.eventually("the approval awaits a decision", func() error {
		// The TTL is short: on a busy machine the denial may come first.
		c := meta.FindStatusCondition(w.approval(name).Status.Conditions, smsv1.ConditionReady)
		if c == nil || (c.Reason != smsv1.ReasonAwaitingDecision && c.Reason != smsv1.ReasonTTLExpired) {
			return fmt.Errorf("approval Ready = %+v, want %s", c, smsv1.ReasonAwaitingDecision)
		}
		return nil
	})
	w.eventually("the approval is denied by its TTL", func() error {
		c := meta.FindStatusCondition(w.approval(name).Status.Conditions, smsv1.ConditionDenied)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != smsv1.ReasonTTLExpired {
			return fmt.Errorf("Denied = %+v", c)
		}
		return nil
	})
	w.waitPlugin("hello", map[string]bool{smsv1.ConditionReady: false, smsv1.ConditionStalled: true, smsv1.ConditionMounted: false})
	s, err := w.kernel("acme").PluginStatus(context.Background(), "agent.hello")
	if err != nil && !adminv1.IsNotFound(err) {
		t.Fatal(err)
	}
	var list smsv1.ApprovalList
	w.must(w.admin.List(context.Background(), &list, client.InNamespace(w.ns)))
	if len(s.Pending) != 0 || len(list.Items) != 1 {
		t.Fatalf("kernel holds %d requests, %d Approvals exist; want none and the denied one", len(s.Pending), len(list.Items))
	}
}
