package webhook

import (
	"context"
	"net/http"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// +kubebuilder:webhook:path=/mutate-sms-dev-v1-plugin,mutating=true,failurePolicy=fail,sideEffects=None,groups=sms.dev,resources=plugins,verbs=create;update,versions=v1,name=mplugin.sms.dev,admissionReviewVersions=v1

// pluginMutator stamps sms.dev/requested-by on Plugins, and gives a new
// Plugin the operator's finalizer.
type pluginMutator struct {
	decoder admission.Decoder
	opts    Options
}

// Handle implements admission.Handler. It is safe to call concurrently.
func (m *pluginMutator) Handle(_ context.Context, req admission.Request) admission.Response {
	if m.opts.isOperator(req.UserInfo.Username) {
		return admission.Allowed("the operator keeps the requester it sets")
	}
	var plugin smsv1.Plugin
	if err := m.decoder.Decode(req, &plugin); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if refusal := agentCodeFrom(&plugin); refusal != "" {
		return admission.Denied(refusal)
	}
	requester := present(req.UserInfo.Username)
	if req.Operation == admissionv1.Update {
		var old smsv1.Plugin
		if err := m.decoder.DecodeRaw(req.OldObject, &old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		if equality.Semantic.DeepEqual(old.Spec, plugin.Spec) {
			// The spec is what was requested; whoever touches the rest
			// did not request it.
			requester = lookup(old.Annotations, smsv1.AnnotationRequestedBy)
		}
	}
	ops := annotationOps(plugin.Annotations, map[string]value{
		smsv1.AnnotationRequestedBy: requester,
	})
	if req.Operation == admissionv1.Create && m.opts.reconciled(req.Namespace) {
		ops = append(ops, finalizerOps(plugin.Finalizers, smsv1.FinalizerUninstall)...)
	}
	return patched(ops)
}

// finalizerOps adds finalizer to a new object that lacks it, so the
// operator's first reconcile need not write the object to add it (the
// reconcile still adds it when admission did not).
func finalizerOps(current []string, finalizer string) []patchOp {
	switch {
	case slices.Contains(current, finalizer):
		return nil
	case len(current) == 0:
		return []patchOp{{Op: "add", Path: "/metadata/finalizers", Value: []string{finalizer}}}
	}
	return []patchOp{{Op: "add", Path: "/metadata/finalizers/-", Value: finalizer}}
}

// agentCodeFrom returns why an agent-made Plugin may not take its code
// from a ConfigMap, or "". The kernel owns such a Plugin's spec and the
// mirror writes its code inline; with codeFrom a person's edit could never
// be compared with the kernel's copy, and the mirror would stop for good.
// (A mutating webhook may refuse: this rides the one Plugins already
// have.)
func agentCodeFrom(p *smsv1.Plugin) string {
	if p.Labels[smsv1.LabelOrigin] != string(smsv1.OriginAgent) || p.Spec.CodeFrom == nil {
		return ""
	}
	return "spec.codeFrom: plugin " + p.Name + " is agent-made (label " + smsv1.LabelOrigin + "=" + string(smsv1.OriginAgent) +
		"), whose code the kernel owns and the operator mirrors inline: edit spec.code instead, or remove the label to make it a plugin of your own"
}
