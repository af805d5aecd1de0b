package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/controllers"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// forged is an Approval of Plugin hello's routeCode that claims to answer
// kernel request id, shows forged reasons and requester, and names no
// declaration: what a user with create on approvals, and no approve verb,
// would write to have the operator show it to whoever decides.
func (w *world) forged(name, id string) *smsv1.Approval {
	return &smsv1.Approval{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: smsv1.ApprovalSpec{PluginRef: corev1.LocalObjectReference{Name: "hello"}, PluginID: "agent.hello",
			CodeHash: adminv1.HashCode([]byte(routeCode)), KernelApprovalID: id,
			Reasons: []string{"nothing sensitive"}, RequestedBy: "a trusted colleague"}}
}

// asOperator returns a client with the operator's identity, which the
// Approval webhook exempts: it writes Approvals as the operator, or as one
// stored before the webhook checked what it now refuses.
func (w *world) asOperator() client.Client {
	w.t.Helper()
	cfg, err := env.User(operatorUser)
	w.must(err)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	w.must(err)
	return c
}

// helloRequestID starts tenants acme and other, and returns the id the
// kernel will give the request of Plugin hello (agent.hello, routeCode):
// the same manifest and code on tenant other get the same id.
func (w *world) helloRequestID() string {
	w.t.Helper()
	w.tenant("acme", smsv1.TenantJudge{})
	w.tenant("other", smsv1.TenantJudge{})
	code := routeCode
	w.must(w.admin.Create(context.Background(), &smsv1.Plugin{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: w.ns},
		Spec: smsv1.PluginSpec{TenantRef: corev1.LocalObjectReference{Name: "other"}, ID: "agent.hello", Version: "1",
			Points: []string{"route"}, Code: &code}}))
	return w.asking("probe").Spec.KernelApprovalID
}

// A forged Approval never answers a kernel request. Alice (create on
// approvals, no approve verb) cannot create one: the webhook refuses
// spec.kernelApprovalId from anyone but the operator. One that got in
// anyway (here written with the operator's identity, which the webhook
// exempts, standing for one stored before the webhook checked) is not the
// Plugin's approvalRef: the operator adopts for a request only Approvals
// the Plugin controls, or pre-approvals, of the request's code and
// declaration. A name squatted by a pre-approval of another declaration
// is skipped, and the forged Approval expires (Unowned), so a decision on
// it never reaches the kernel. Seen failing without the ownership and
// declaration checks in approvalFor: the Plugin's approvalRef named
// "hello-forged", whose reasons kubectl sms approve would have shown; and
// without the ownership check in the approval reconciler: "hello-forged"
// waited for a decision (Expired nil) and would have carried one to the
// kernel.
func TestForgedApprovalNotAdopted(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	id := w.helloRequestID()

	alice := w.user("alice", false)
	if err := alice.Create(context.Background(), w.forged("hello-forged", id)); err == nil ||
		!strings.Contains(err.Error(), "spec.kernelApprovalId is set by the operator") {
		t.Fatalf("alice's forged Approval: got %v, want the webhook's refusal", err)
	}
	w.must(w.asOperator().Create(context.Background(), w.forged("hello-forged", id)))
	squat := w.forged(controllers.ApprovalName("hello", id, 0), "")
	squat.Spec.Reasons, squat.Spec.RequestedBy, squat.Spec.Declaration = nil, "", &smsv1.Declaration{}
	w.must(alice.Create(context.Background(), squat))

	w.plugin(alice, "hello", "agent.hello", routeCode)
	a := w.asking("hello")
	var p smsv1.Plugin
	w.must(w.admin.Get(context.Background(), w.key("hello"), &p))
	if a.Name == "hello-forged" || a.Name == squat.Name || !metav1.IsControlledBy(a, &p) || a.Spec.KernelApprovalID != id ||
		a.Spec.Declaration == nil || strings.Join(a.Spec.Reasons, ",") == "nothing sensitive" {
		t.Fatalf("plugin hello asks through approval %s (%+v), want one the Plugin controls for request %s", a.Name, a.Spec, id)
	}
	w.expired("hello-forged", smsv1.ReasonUnowned)
	w.must(w.decide(w.user("bob", true), a.Name, smsv1.DecisionApproved))
	w.waitPlugin("hello", map[string]bool{smsv1.ConditionApproved: true, smsv1.ConditionMounted: true, smsv1.ConditionReady: true})
}

// When every name the operator would give a request's Approval is taken
// by Approvals that do not answer it (pre-approvals of another
// declaration, squatted ahead), the Plugin says so: Ready False naming the
// names, and nobody is shown a squatted Approval. Seen failing with the
// error only returned from the reconcile: the Plugin had no Ready
// condition at all ("Ready = nil").
func TestSquattedApprovalNamesSaySo(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	id := w.helloRequestID()
	alice := w.user("alice", false)
	for n := range 8 {
		squat := w.forged(controllers.ApprovalName("hello", id, n), "")
		squat.Spec.Reasons, squat.Spec.RequestedBy, squat.Spec.Declaration = nil, "", &smsv1.Declaration{Scopes: []string{"none"}}
		w.must(alice.Create(context.Background(), squat))
	}
	w.plugin(alice, "hello", "agent.hello", routeCode)
	w.eventually("plugin hello says its approval names are taken", func() error {
		var p smsv1.Plugin
		if err := w.admin.Get(context.Background(), w.key("hello"), &p); err != nil {
			return err
		}
		c := meta.FindStatusCondition(p.Status.Conditions, smsv1.ConditionReady)
		if c == nil || !strings.Contains(c.Message, "are taken") || !strings.Contains(c.Message, controllers.ApprovalName("hello", id, 7)) {
			return fmt.Errorf("Ready = %+v, approvalRef %v", c, p.Status.ApprovalRef)
		}
		if p.Status.ApprovalRef != nil {
			return fmt.Errorf("approvalRef = %v, want none", p.Status.ApprovalRef)
		}
		return nil
	})
}
