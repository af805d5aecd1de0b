package webhook

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// +kubebuilder:webhook:path=/validate-sms-dev-v1-approval,mutating=false,failurePolicy=fail,sideEffects=None,groups=sms.dev,resources=approvals,verbs=create;update,versions=v1,name=vapproval.sms.dev,admissionReviewVersions=v1

// approvalValidator refuses changed decisions, decisions by users without
// the approve verb, and self-approvals the tenant forbids.
type approvalValidator struct {
	decoder admission.Decoder
	// reader reads Plugins and Tenants uncached.
	reader client.Reader
	// writer creates SubjectAccessReviews.
	writer client.Writer
	opts   Options
}

// Handle implements admission.Handler. It is safe to call concurrently;
// it only reads, so the API server may retry it.
func (v *approvalValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	approval, old, err := decodeApprovals(v.decoder, req)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if old != nil && old.Spec.Decision != "" && approval.Spec.Decision != old.Spec.Decision {
		return admission.Denied(fmt.Sprintf("spec.decision is already %q; a decision cannot change", old.Spec.Decision))
	}
	if v.opts.isOperator(req.UserInfo.Username) {
		return admission.Allowed("")
	}
	if refusal := personCreate(old, approval); refusal != "" {
		return admission.Denied(refusal)
	}
	if field := rebound(old, approval); field != "" {
		return admission.Denied(fmt.Sprintf("spec.%s cannot change: an Approval stays bound to the plugin, code and declaration it asks about "+
			"(only spec.decision and spec.message are for people to set)", field))
	}
	if !decides(old, approval) {
		return admission.Allowed("")
	}
	allowed, err := v.mayApprove(ctx, req)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if !allowed {
		return admission.Denied(fmt.Sprintf("user %q may not approve in namespace %q: needs verb %q on approvals.%s",
			req.UserInfo.Username, req.Namespace, VerbApprove, smsv1.GroupVersion.Group))
	}
	refusal, err := v.selfApproval(ctx, req.UserInfo.Username, approval)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if refusal != "" {
		return admission.Denied(refusal)
	}
	logf.FromContext(ctx).Info("Approval decided", "approval", req.Name, "namespace", req.Namespace,
		"decision", approval.Spec.Decision, "user", req.UserInfo.Username)
	return admission.Allowed("")
}

// mayApprove asks the API server whether the request's user holds the
// approve verb on approvals.sms.dev in the request's namespace.
func (v *approvalValidator) mayApprove(ctx context.Context, req admission.Request) (bool, error) {
	u := req.UserInfo
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   u.Username,
		Groups: u.Groups,
		UID:    u.UID,
		Extra:  extra(u.Extra),
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: req.Namespace,
			Verb:      VerbApprove,
			Group:     smsv1.GroupVersion.Group,
			Resource:  "approvals",
			Name:      req.Name,
		},
	}}
	if err := v.writer.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("check verb %s for %s: %w", VerbApprove, u.Username, err)
	}
	return sar.Status.Allowed, nil
}

func extra(in map[string]authenticationv1.ExtraValue) map[string]authorizationv1.ExtraValue {
	if in == nil {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}

// selfApproval returns why user may not decide approval, or "" when the
// tenant allows it. The requester is the Approval's spec.requestedBy and
// also the Plugin's sms.dev/requested-by, which only this package writes:
// spec.requestedBy is a field any user with update on approvals can set.
// A missing Plugin or Tenant allows the decision.
func (v *approvalValidator) selfApproval(ctx context.Context, user string, approval *smsv1.Approval) (string, error) {
	var plugin smsv1.Plugin
	if found, err := v.get(ctx, approval.Namespace, approval.Spec.PluginRef.Name, &plugin); !found {
		return "", err
	}
	var tenant smsv1.Tenant
	if found, err := v.get(ctx, approval.Namespace, plugin.Spec.TenantRef.Name, &tenant); !found {
		return "", err
	}
	if !tenant.Spec.Judge.ForbidSelfApproval {
		return "", nil
	}
	if !smsv1.IsRequester(user, approval, &plugin, &tenant) {
		return "", nil
	}
	return fmt.Sprintf("user %q requested plugin %q and may not approve it: tenant %q forbids self-approval",
		user, plugin.Name, tenant.Name), nil
}

// get reads namespace/name into obj, reporting whether it exists; an empty
// name names nothing.
func (v *approvalValidator) get(ctx context.Context, namespace, name string, obj client.Object) (bool, error) {
	if name == "" {
		return false, nil
	}
	err := v.reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get %T %s/%s: %w", obj, namespace, name, err)
	}
	return true, nil
}

// personCreate returns why a person may not create approval, or "" (and
// "" for an update, which rebound checks). A person's Approval is a
// pre-approval: it names the plugin, the code hash and the declaration. The
// kernel approval id, the reasons and the requester are the operator's, copied
// from the kernel's request; an Approval a person wrote with them could show
// a forged request to whoever decides it. Without a declaration it could
// never say what it approves.
func personCreate(old, cur *smsv1.Approval) string {
	if old != nil {
		return ""
	}
	s := cur.Spec
	field := ""
	switch {
	case s.KernelApprovalID != "":
		field = "kernelApprovalId"
	case s.RequestedBy != "":
		field = "requestedBy"
	case len(s.Reasons) > 0:
		field = "reasons"
	case s.Replaces != nil:
		field = "replaces"
	case s.Declaration == nil:
		return "spec.declaration is required: add spec.declaration, what the plugin declares (points, scopes, inject, " +
			"optional, provide, routes, schedules, contributions), so the Approval says what it approves"
	default:
		return ""
	}
	return fmt.Sprintf("spec.%s is set by the operator when the kernel asks for a human; a pre-approval names only "+
		"spec.pluginRef, spec.pluginId, spec.codeHash and spec.declaration (and spec.decision, spec.message)", field)
}

// rebound names the first binding field of the Approval an update changes:
// the plugin, code, declaration, kernel approval, reasons or requester it
// was created with. Editing them could point a decision at other code or a
// wider declaration, or dodge the self-approval rule.
func rebound(old, cur *smsv1.Approval) string {
	if old == nil {
		return ""
	}
	o, c := old.Spec, cur.Spec
	switch {
	case o.PluginRef != c.PluginRef:
		return "pluginRef"
	case o.PluginID != c.PluginID:
		return "pluginId"
	case o.CodeHash != c.CodeHash:
		return "codeHash"
	case o.KernelApprovalID != c.KernelApprovalID:
		return "kernelApprovalId"
	case !equality.Semantic.DeepEqual(o.Declaration, c.Declaration):
		return "declaration"
	case o.RequestedBy != c.RequestedBy:
		return "requestedBy"
	case !slices.Equal(o.Reasons, c.Reasons):
		return "reasons"
	case !equality.Semantic.DeepEqual(o.Replaces, c.Replaces):
		return "replaces"
	}
	return ""
}
