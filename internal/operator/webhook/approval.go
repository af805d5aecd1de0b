package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// +kubebuilder:webhook:path=/mutate-sms-dev-v1-approval,mutating=true,failurePolicy=fail,sideEffects=None,groups=sms.dev,resources=approvals,verbs=create;update,versions=v1,name=mapproval.sms.dev,admissionReviewVersions=v1

// approvalMutator stamps sms.dev/decided-by and sms.dev/decided-at on
// Approvals.
type approvalMutator struct {
	decoder admission.Decoder
	opts    Options
}

// Handle implements admission.Handler. It is safe to call concurrently.
func (m *approvalMutator) Handle(_ context.Context, req admission.Request) admission.Response {
	if m.opts.isOperator(req.UserInfo.Username) {
		return admission.Allowed("the operator keeps the decider it sets")
	}
	approval, old, err := decodeApprovals(m.decoder, req)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	want := map[string]value{
		smsv1.AnnotationDecidedBy:     nil,
		smsv1.AnnotationDecidedAt:     nil,
		smsv1.AnnotationDecidedGroups: nil,
	}
	switch {
	case decides(old, approval):
		want[smsv1.AnnotationDecidedBy] = present(req.UserInfo.Username)
		want[smsv1.AnnotationDecidedAt] = present(m.opts.now().UTC().Format(time.RFC3339))
		groups, _ := json.Marshal(slices.Concat([]string{}, req.UserInfo.Groups)) // a list of strings always encodes
		want[smsv1.AnnotationDecidedGroups] = present(string(groups))
	case old != nil:
		for k := range want {
			want[k] = lookup(old.Annotations, k)
		}
	}
	return patched(annotationOps(approval.Annotations, want))
}

// decides reports whether the request sets the decision: a create with
// one, or an update from none.
func decides(old, approval *smsv1.Approval) bool {
	return approval.Spec.Decision != "" && (old == nil || old.Spec.Decision == "")
}

// decodeApprovals decodes the request's object and, on update, its old
// object (nil otherwise).
func decodeApprovals(d admission.Decoder, req admission.Request) (approval, old *smsv1.Approval, err error) {
	approval = &smsv1.Approval{}
	if err := d.Decode(req, approval); err != nil {
		return nil, nil, err
	}
	if req.Operation != admissionv1.Update {
		return approval, nil, nil
	}
	old = &smsv1.Approval{}
	if err := d.DecodeRaw(req.OldObject, old); err != nil {
		return nil, nil, err
	}
	return approval, old, nil
}
