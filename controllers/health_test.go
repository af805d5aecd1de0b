package controllers_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/argohealth"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
)

// loadFailCode passes lint and fails the load gate: its activation throws.
const loadFailCode = `export default async function activate(cap) { throw new Error('no database today') }`

// The Argo CD health checks in config/argocd, run with Argo CD's Lua
// runtime on objects the real controllers produced, give each state the
// health Argo CD users expect: a rejected or failed Plugin is Degraded, a
// pending or rolling one Progressing, a disabled one Suspended; an
// Approval that can never apply is Degraded, one superseded after it
// applied stays Healthy. Without
// these checks Argo CD shows every custom resource Healthy, whatever its
// conditions. SMS_UPDATE_ARGOCD=1 records the objects as the fixtures
// that argohealth's TestFixtures replays. Seen failing with Plugin's
// health.lua ignoring Stalled (the rejected plugin was Progressing), and
// with Approval's ignoring Expired (the undecided, expired approval was
// Progressing).
func TestArgoCDHealth(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	ctx := context.Background()
	w.tenant("acme", smsv1.TenantJudge{})
	w.health("Tenant", "acme", "ready", "Healthy")

	w.plugin(w.admin, "quiet", "agent.quiet", quietCode)
	w.health("Plugin", "quiet", "mounted", "Healthy")
	w.plugin(w.admin, "bad", "agent.bad", importCode)
	w.health("Plugin", "bad", "rejected", "Degraded")
	w.plugin(w.admin, "broken", "agent.broken", loadFailCode)
	w.health("Plugin", "broken", "failed-to-load", "Degraded")

	p := w.plugin(w.admin, "hello", "agent.hello", routeCode)
	w.health("Plugin", "hello", "pending-approval", "Progressing")
	p = w.waitPlugin(p.Name, map[string]bool{smsv1.ConditionApproved: false})
	first := p.Status.ApprovalRef.Name
	w.health("Approval", first, "awaiting-decision", "Progressing")
	w.must(w.decide(w.admin, first, smsv1.DecisionApproved))
	w.health("Approval", first, "approved", "Healthy")
	w.health("Plugin", "hello", "mounted-after-approval", "Healthy")
	w.setCode(w.admin, "hello", routeCode2)
	p = w.waitPlugin("hello", map[string]bool{smsv1.ConditionApproved: false, smsv1.ConditionMounted: true})
	w.health("Plugin", "hello", "new-code-pending", "Progressing")
	w.health("Approval", first, "superseded", "Healthy")
	second := p.Status.ApprovalRef.Name
	w.setCode(w.admin, "hello", strings.ReplaceAll(routeCode2, "hello", "hey"))
	w.health("Approval", second, "expired-undecided", "Degraded")

	var quiet smsv1.Plugin
	w.must(w.admin.Get(ctx, w.key("quiet"), &quiet))
	before, off := quiet.DeepCopy(), false
	quiet.Spec.Enabled = &off
	w.must(w.admin.Patch(ctx, &quiet, client.MergeFrom(before)))
	w.health("Plugin", "quiet", "disabled", "Suspended")

	w.patchTenant("acme", func(tn *smsv1.Tenant) { tn.Spec.Suspend = true })
	w.health("Tenant", "acme", "suspended", "Suspended")
	waiting := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "waiting", Namespace: w.ns}, Spec: smsv1.TenantSpec{
		Model: &smsv1.TenantModel{Provider: "scripted", ScriptConfigMapRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "waiting-model"}, Key: "script.json"}}}}
	w.must(w.admin.Create(ctx, waiting))
	w.health("Tenant", "waiting", "reference-not-found", "Progressing")
	invalid := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "invalid", Namespace: w.ns},
		Spec: smsv1.TenantSpec{Model: &smsv1.TenantModel{Provider: "scripted"}}}
	w.must(w.admin.Create(ctx, invalid))
	w.health("Tenant", "invalid", "invalid-spec", "Degraded")
}

// health waits until Argo CD's check of the named object of kind answers
// want, and records the object as fixture when SMS_UPDATE_ARGOCD is set.
func (w *world) health(kind, name, fixture, want string) {
	w.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(smsv1.GroupVersion.WithKind(kind))
	var got argohealth.Status
	w.eventually(fmt.Sprintf("%s %s %s", kind, name, want), func() error {
		if err := w.admin.Get(context.Background(), w.key(name), u); err != nil {
			return err
		}
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if observed != u.GetGeneration() {
			return fmt.Errorf("the operator has seen generation %d of %d", observed, u.GetGeneration())
		}
		var err error
		if got, err = argohealth.Check(u); err != nil {
			return err
		}
		if got.Status != want {
			return fmt.Errorf("health %+v", got)
		}
		return nil
	})
	if os.Getenv("SMS_UPDATE_ARGOCD") != "" {
		w.must(argohealth.Record(fixture, u, got))
	}
}
