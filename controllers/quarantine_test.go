package controllers

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// The kernel's quarantine wins over spec.enabled until a person changes
// the Plugin's spec after its status reported the quarantine; otherwise
// the operator would enable a crashing plugin at every reconcile. toggle
// gets no kernel client here: reaching it would panic. Seen failing (a nil
// client called) with toggle's quarantine check removed.
func TestQuarantineWinsUntilTheSpecChanges(t *testing.T) {
	r := &PluginReconciler{}
	p := &smsv1.Plugin{Spec: smsv1.PluginSpec{ID: "agent.x"}}
	p.Generation = 3
	for _, conds := range [][]metav1.Condition{nil, {{Type: smsv1.ConditionQuarantined, Status: metav1.ConditionTrue,
		Reason: smsv1.ReasonQuarantined, ObservedGeneration: 3}}} {
		p.Status.Conditions = conds
		f, err := r.toggle(context.Background(), nil, p, quarantined)
		if err != nil || f.Enabled || f.Quarantine == "" {
			t.Fatalf("toggle of a quarantined fiber = %+v, %v; want it left as it is", f, err)
		}
		if retryQuarantined(p) {
			t.Fatalf("retryQuarantined with conditions %v at generation %d = true", conds, p.Generation)
		}
	}
	p.Generation = 4 // a person changed the spec since
	if !retryQuarantined(p) {
		t.Fatal("retryQuarantined after a spec change = false, want the quarantine lifted")
	}
}

// The Quarantined condition keeps the generation that first reported it,
// so a reconcile that failed after a person's edit (and never reached the
// toggle) does not make the edit look older than the quarantine. Seen
// failing with quarantineCondition setting the condition on every
// reconcile.
func TestQuarantineConditionKeepsItsGeneration(t *testing.T) {
	p := &smsv1.Plugin{Spec: smsv1.PluginSpec{ID: "agent.x"}}
	p.Generation = 3
	p.Status = pluginStatus(p, &pluginObservation{fiber: quarantined}, nil)
	p.Generation = 4 // a person's edit; this reconcile fails before the toggle
	p.Status = pluginStatus(p, &pluginObservation{fiber: quarantined}, errors.New("the kernel answered 503"))
	if !retryQuarantined(p) {
		t.Fatalf("conditions %+v: the edit at generation 4 no longer lifts the quarantine", p.Status.Conditions)
	}
}
