package v1

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Decision is a human's answer to an Approval.
// +kubebuilder:validation:Enum=Approved;Denied
type Decision string

// Decisions.
const (
	DecisionApproved Decision = "Approved"
	DecisionDenied   Decision = "Denied"
)

// ApprovalSpec asks a human to approve one plugin's exact code and
// declaration.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.decision) || (has(self.decision) && self.decision == oldSelf.decision)",message="decision is immutable once set"
type ApprovalSpec struct {
	// PluginRef names the Plugin waiting for this decision.
	PluginRef corev1.LocalObjectReference `json:"pluginRef"`
	// PluginID is the plugin's id in the kernel.
	PluginID string `json:"pluginId"`
	// CodeHash binds the approval to the code the judge saw; an approval
	// of other code is Expired, never applied.
	CodeHash string `json:"codeHash"`
	// KernelApprovalID is the id of the kernel's request this Approval
	// answers. Only the operator sets it, on the Approvals it creates (one
	// per request, owned by the Plugin); the webhook refuses it from anyone
	// else. A pre-approval (written ahead, say in git) leaves it empty and
	// applies to the request whose plugin, code hash and declaration it
	// names.
	// +optional
	KernelApprovalID string `json:"kernelApprovalId,omitempty"`
	// Declaration is what the plugin declares it may do: the decision
	// covers exactly this. The operator copies it from the kernel's
	// request; a pre-approval must name it: the webhook refuses a new
	// Approval without it.
	// +optional
	Declaration *Declaration `json:"declaration,omitempty"`
	// Reasons name the scopes and points that made the plugin sensitive.
	// Only the operator sets them, from the kernel's request.
	// +optional
	Reasons []string `json:"reasons,omitempty"`
	// RequestedBy is who asked for the plugin. Only the operator sets it,
	// from the kernel's request.
	// +optional
	RequestedBy string `json:"requestedBy,omitempty"`
	// Replaces is the version the plugin would replace, when it replaces
	// one: what the new declaration adds to it and removes from it, and
	// the diff of the code. Only the operator sets it, from the kernel's
	// request.
	// +optional
	Replaces *ApprovalReplaces `json:"replaces,omitempty"`
	// Decision is set by a human: Approved or Denied. It cannot change.
	// +optional
	Decision Decision `json:"decision,omitempty"`
	// Message is the human's note on the decision.
	// +optional
	Message string `json:"message,omitempty"`
}

// Declaration is a plugin manifest's declaration in the form a person
// reviews: the points, scopes and keys it may use and the items it
// contributes declaratively. Lists are sorted; an empty list is left out.
type Declaration struct {
	// Points are the points the plugin may contribute to: its manifest's
	// points and those its contributes has items for.
	// +optional
	Points []string `json:"points,omitempty"`
	// Scopes are the capabilities it asks for, such as net.
	// +optional
	Scopes []string `json:"scopes,omitempty"`
	// Inject are the keys it needs to run.
	// +optional
	Inject []string `json:"inject,omitempty"`
	// Optional are the keys it uses when present.
	// +optional
	Optional []string `json:"optional,omitempty"`
	// Provide are the keys it may provide.
	// +optional
	Provide []string `json:"provide,omitempty"`
	// Routes are the routes its manifest contributes, as "METHOD /path".
	// +optional
	Routes []string `json:"routes,omitempty"`
	// Schedules are the jobs its manifest contributes, as "name every
	// 1h0m0s".
	// +optional
	Schedules []string `json:"schedules,omitempty"`
	// Contributions are its manifest's other declarative items, one
	// "point: item" each, the item as compact JSON.
	// +optional
	Contributions []string `json:"contributions,omitempty"`
}

// ApprovalStatus records the decision and what the kernel did with it.
type ApprovalStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Approved, Denied, Expired, Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// DecidedBy is the user who set the decision.
	// +optional
	DecidedBy string `json:"decidedBy,omitempty"`
	// DecidedAt is when they set it.
	// +optional
	DecidedAt *metav1.Time `json:"decidedAt,omitempty"`
	// Decisions are the approvals the kernel has counted for this request
	// so far, when its tenant needs several approvers (spec.judge.approvers):
	// who, when, and which of the tenant's approverGroups they are in.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	Decisions []ApprovalDecision `json:"decisions,omitempty"`
}

// ApprovalReplaces is the committed version an Approval's plugin would
// replace, and what changes from it.
type ApprovalReplaces struct {
	Version  string `json:"version"`
	CodeHash string `json:"codeHash"`
	// Added and Removed are what the new declaration has that this
	// version's has not, and what it drops.
	// +optional
	Added *Declaration `json:"added,omitempty"`
	// +optional
	Removed *Declaration `json:"removed,omitempty"`
	// CodeDiff is the unified diff from this version's code to the new
	// code (the kernel cuts it at 64 KiB, saying so).
	// +kubebuilder:validation:MaxLength=70000
	// +optional
	CodeDiff string `json:"codeDiff,omitempty"`
	// Note says what the kernel could not show.
	// +optional
	Note string `json:"note,omitempty"`
}

// ApprovalDecision is one approval the kernel counted.
type ApprovalDecision struct {
	By string      `json:"by"`
	At metav1.Time `json:"at"`
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// Approval is a human's decision on a plugin the judge parked.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=sms
// +kubebuilder:printcolumn:name="Plugin",type=string,JSONPath=`.spec.pluginRef.name`
// +kubebuilder:printcolumn:name="Points",type=string,JSONPath=`.spec.declaration.points`
// +kubebuilder:printcolumn:name="Decision",type=string,JSONPath=`.spec.decision`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Requested-By",type=string,JSONPath=`.spec.requestedBy`
// +kubebuilder:printcolumn:name="Decided-By",type=string,JSONPath=`.status.decidedBy`,priority=1
// +kubebuilder:printcolumn:name="Scopes",type=string,JSONPath=`.spec.declaration.scopes`,priority=1
// +kubebuilder:printcolumn:name="Kernel-Approval",type=string,JSONPath=`.spec.kernelApprovalId`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Approval struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ApprovalSpec   `json:"spec,omitempty"`
	Status ApprovalStatus `json:"status,omitempty"`
}

// ApprovalList is a list of Approvals.
// +kubebuilder:object:root=true
type ApprovalList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Approval `json:"items"`
}

// IsRequester reports whether Kubernetes user asked for the code approval
// a is about: as the Approval's spec.requestedBy, or as the
// sms.dev/requested-by annotation the webhook stamps on Plugin p, or as
// the application user (user:<login>) of tenant t who asked the agent for
// it, mapped to a Kubernetes user by t's spec.users.kubernetesUsers (the
// same name when not listed). Under a tenant's forbidSelfApproval, a
// requester may not approve; both the webhook (when the decision is made)
// and the operator (when it is carried to the kernel) ask this.
func IsRequester(user string, a *Approval, p *Plugin, t *Tenant) bool {
	if user == "" {
		return false
	}
	for _, by := range []string{a.Spec.RequestedBy, p.Annotations[AnnotationRequestedBy]} {
		if by == user {
			return true
		}
		if login, ok := strings.CutPrefix(by, AppUserPrefix); ok && login != "" && kubernetesUserOf(t, login) == user {
			return true
		}
	}
	return false
}

// AppUserPrefix starts the requester of a plugin the agent defined for an
// application user of the kernel (the kernel's http.UserPrefix).
const AppUserPrefix = "user:"

// kubernetesUserOf is the Kubernetes user who is application user login.
func kubernetesUserOf(t *Tenant, login string) string {
	if t != nil && t.Spec.Users != nil {
		if k := t.Spec.Users.KubernetesUsers[login]; k != "" {
			return k
		}
	}
	return login
}
