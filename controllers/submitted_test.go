package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// A submission answers for the generation it was made at. A person who
// reverts an agent-made Plugin to a spec submitted at an earlier
// generation, before the reconcile after the mirror's newer copy has run,
// makes a new request: the edit counts as pending for the mirror and as
// not yet judged for the reconciler. Seen failing with the submission id
// compared alone: the revert was taken as judged, never submitted, and
// the mirror wrote the kernel's newer copy over it.
func TestSubmissionAnswersForItsGeneration(t *testing.T) {
	code := "export default async function activate(cap) {}"
	p := &smsv1.Plugin{
		ObjectMeta: metav1.ObjectMeta{Generation: 3,
			Labels:      map[string]string{smsv1.LabelOrigin: string(smsv1.OriginAgent)},
			Annotations: map[string]string{smsv1.AnnotationKernelSubmission: "the agent's newer copy", smsv1.AnnotationKernelEnabled: "true"}},
		Spec: smsv1.PluginSpec{ID: "agent.notes", Version: "1", Code: &code},
	}
	key := specKey(p)
	p.Status = smsv1.PluginStatus{Submission: key, SubmittedGeneration: 1, CodeHash: "sha256:1",
		Verdict: &smsv1.Verdict{Result: "rejected", Gate: "lint"}}
	e := personEdits(p, key)
	if !personEditPending(p, kernelCopy{}, e) {
		t.Errorf("a revert to generation 1's submission at generation 3: edit pending false, want true")
	}
	if _, known := knownVerdict(p, adminv1.PluginStatus{}, "sha256:1", key); known {
		t.Errorf("a revert to generation 1's submission at generation 3: verdict known, want a new submission")
	}
	p.Status.SubmittedGeneration = 3
	if personEditPending(p, kernelCopy{}, e) {
		t.Errorf("the same spec submitted at generation 3: edit pending true, want false")
	}
	if _, known := knownVerdict(p, adminv1.PluginStatus{}, "sha256:1", key); !known {
		t.Errorf("the same spec submitted at generation 3: verdict unknown, want the recorded one")
	}
}
