package controllers

import (
	"strconv"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// Who owns a Plugin's spec (docs/operator.md has the whole table):
//
//   - origin git (no sms.dev/origin label): the spec. The Plugin
//     reconciler submits it and makes the kernel's enabled state follow
//     it; whatever the agent does to that plugin id is put back.
//   - origin agent: the kernel. The mirror writes the kernel's copy as
//     the spec under field owner sms-mirror, with annotations saying what
//     it copied. A spec that differs from them was edited by a person:
//     the Plugin reconciler pushes that edit to the kernel (the person
//     wins, and an Event and the kernel's log record who), and the mirror
//     waits until the kernel has it before mirroring again.

// edits are a person's changes to an agent-made Plugin's spec since the
// mirror last wrote it: its manifest or code (edited) and its enabled
// field (toggled).
type edits struct{ edited, toggled bool }

// personEdits compares an agent-made Plugin's spec, whose submission id
// is key, with what the mirror last wrote. A Plugin from git, or one the
// mirror never annotated, has no person's edit to push.
func personEdits(p *smsv1.Plugin, key string) edits {
	a := p.Annotations
	if p.Labels[smsv1.LabelOrigin] != string(smsv1.OriginAgent) || a[smsv1.AnnotationKernelSubmission] == "" {
		return edits{}
	}
	return edits{edited: key != a[smsv1.AnnotationKernelSubmission],
		toggled: strconv.FormatBool(specEnabled(p)) != a[smsv1.AnnotationKernelEnabled]}
}

// specKey is the submission id of the Plugin's inline spec; a spec whose
// code comes from a ConfigMap, or whose manifest does not decode, has
// none ("").
func specKey(p *smsv1.Plugin) string {
	m, err := manifestOf(p)
	if err != nil || p.Spec.Code == nil {
		return ""
	}
	return submissionID(adminv1.Plugin{Manifest: m, Code: *p.Spec.Code})
}

// submitted reports whether the Plugin's spec, whose submission id is
// key, was already submitted (or, for an agent-made Plugin, observed in
// the kernel) at its current generation. A key recorded for an earlier
// generation does not count: a person who reverts the spec to a
// submission made before asks again, or the kernel's newer copy would be
// mirrored over the revert.
func submitted(p *smsv1.Plugin, key string) bool {
	return key != "" && p.Status.Submission == key && p.Status.SubmittedGeneration == p.Generation
}

// specEnabled is spec.enabled with its default.
func specEnabled(p *smsv1.Plugin) bool { return p.Spec.Enabled == nil || *p.Spec.Enabled }

// requester names who last changed the Plugin's spec, as the webhook
// stamped it.
func requester(p *smsv1.Plugin) string {
	if by := p.Annotations[smsv1.AnnotationRequestedBy]; by != "" {
		return by
	}
	return "someone"
}
