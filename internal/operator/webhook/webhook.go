package webhook

import (
	"errors"
	"fmt"
	"slices"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// The webhooks read Plugins and Tenants to apply the judge's
// forbidSelfApproval policy, and ask the API server whether a user holds
// the approve verb.
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups=sms.dev,resources=plugins;tenants,verbs=get;list;watch

// Paths the webhooks are served on; config/webhook/manifests.yaml points
// the API server at them.
const (
	PathMutatePlugin     = "/mutate-sms-dev-v1-plugin"
	PathMutateApproval   = "/mutate-sms-dev-v1-approval"
	PathValidateApproval = "/validate-sms-dev-v1-approval"
)

// VerbApprove is the custom RBAC verb a user needs on approvals.sms.dev to
// set an Approval's decision.
const VerbApprove = "approve"

// Options configure the webhooks.
type Options struct {
	// OperatorUser is the operator's own user name (its service account,
	// e.g. system:serviceaccount:sms-system:sms-controller-manager). Its
	// requests keep the annotations they send and skip the approve-verb
	// and self-approval checks. Empty trusts nobody.
	OperatorUser string
	// Now stamps sms.dev/decided-at; nil means time.Now.
	Now func() time.Time
	// Namespaces are those the operator reconciles; empty means all. A new
	// Plugin gets the operator's finalizer only there, since elsewhere no
	// operator would ever remove it.
	Namespaces []string
}

func (o Options) reconciled(namespace string) bool {
	return len(o.Namespaces) == 0 || slices.Contains(o.Namespaces, namespace)
}

func (o Options) isOperator(user string) bool {
	return o.OperatorUser != "" && user == o.OperatorUser
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Register serves the Plugin and Approval webhooks on mgr's webhook
// server. mgr's scheme must hold the sms.dev/v1 and authorization/v1
// types. Call it before mgr starts.
func Register(mgr manager.Manager, opts Options) error {
	scheme := mgr.GetScheme()
	if err := requireKinds(scheme,
		smsv1.GroupVersion.WithKind("Plugin"),
		smsv1.GroupVersion.WithKind("Approval"),
		smsv1.GroupVersion.WithKind("Tenant"),
		authorizationv1.SchemeGroupVersion.WithKind("SubjectAccessReview"),
	); err != nil {
		return fmt.Errorf("register webhooks: %w", err)
	}
	decoder := admission.NewDecoder(scheme)
	server := mgr.GetWebhookServer()
	server.Register(PathMutatePlugin, &admission.Webhook{
		Handler: &pluginMutator{decoder: decoder, opts: opts},
	})
	server.Register(PathMutateApproval, &admission.Webhook{
		Handler: &approvalMutator{decoder: decoder, opts: opts},
	})
	server.Register(PathValidateApproval, &admission.Webhook{
		Handler: &approvalValidator{
			decoder: decoder,
			reader:  mgr.GetAPIReader(),
			writer:  mgr.GetClient(),
			opts:    opts,
		},
	})
	return nil
}

func requireKinds(scheme *runtime.Scheme, kinds ...schema.GroupVersionKind) error {
	var errs []error
	for _, gvk := range kinds {
		if !scheme.Recognizes(gvk) {
			errs = append(errs, fmt.Errorf("the manager's scheme lacks %s: add its AddToScheme", gvk))
		}
	}
	return errors.Join(errs...)
}
