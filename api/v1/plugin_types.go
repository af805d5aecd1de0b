package v1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PluginSpec is an agent plugin: its manifest and code, and whether it is
// enabled. The operator submits it to the tenant's kernel, whose judge
// decides whether it mounts.
// +kubebuilder:validation:XValidation:rule="has(self.code) != has(self.codeFrom)",message="exactly one of code and codeFrom must be set"
type PluginSpec struct {
	// TenantRef names the Tenant, in the same namespace, whose kernel runs
	// the plugin.
	TenantRef corev1.LocalObjectReference `json:"tenantRef"`
	// ID is the plugin's id in the kernel, agent.<name>; it cannot change.
	// +kubebuilder:validation:Pattern=`^agent\.[a-z0-9_-]+(\.[a-z0-9_-]+)*$`
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="id is immutable"
	ID string `json:"id"`
	// Version is the plugin's version.
	// +kubebuilder:validation:MinLength=1
	Version string `json:"version"`
	// Description says what the plugin does.
	// +optional
	Description string `json:"description,omitempty"`
	// Inject lists the keys the plugin needs.
	// +optional
	Inject []string `json:"inject,omitempty"`
	// Optional lists keys the plugin uses when present.
	// +optional
	Optional []string `json:"optional,omitempty"`
	// Provide lists the keys the plugin may provide.
	// +optional
	Provide []string `json:"provide,omitempty"`
	// Scopes lists the capabilities the judge's policy weighs, such as net.
	// +optional
	Scopes []string `json:"scopes,omitempty"`
	// Points lists the points the plugin's code may contribute to (route,
	// tool, schedule, ...). The kernel refuses a contribution to any other,
	// and the judge's policy reads this list: a sensitive point here waits
	// for a human. Points with items in contributes are declared there.
	// +optional
	Points []string `json:"points,omitempty"`
	// Contributes holds declarative items per point (routes, collections,
	// schedules, tools), applied before activate.
	// +optional
	Contributes map[string][]apiextensionsv1.JSON `json:"contributes,omitempty"`
	// Code is the plugin's JavaScript: export default async function activate(cap) {...}.
	// +optional
	Code *string `json:"code,omitempty"`
	// CodeFrom reads the code from a ConfigMap key instead.
	// +optional
	CodeFrom *corev1.ConfigMapKeySelector `json:"codeFrom,omitempty"`
	// Enabled runs the plugin when true (the default); false disables it
	// and keeps it installed.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// Origin says where a Plugin came from.
// +kubebuilder:validation:Enum=git;agent
type Origin string

// Origins.
const (
	// OriginGit is a Plugin a person or a GitOps tool applied.
	OriginGit Origin = "git"
	// OriginAgent is a plugin the agent defined inside a kernel, mirrored.
	OriginAgent Origin = "agent"
)

// VerdictResult is what the judge made of a submission. Verdict.Result
// and Edit.Result hold one.
// +kubebuilder:validation:Enum=mounted;pending;rejected
type VerdictResult string

// Verdict results, the judge's statuses.
const (
	// VerdictMounted: the plugin passed every gate and runs.
	VerdictMounted VerdictResult = "mounted"
	// VerdictPending: the plugin waits for a human's approval.
	VerdictPending VerdictResult = "pending"
	// VerdictRejected: a gate or the policy refused the plugin.
	VerdictRejected VerdictResult = "rejected"
)

// Verdict is the judge's answer to the last submission.
type Verdict struct {
	// Result is mounted, pending or rejected.
	Result VerdictResult `json:"result"`
	// Gate names the gate or policy that decided.
	// +optional
	Gate string `json:"gate,omitempty"`
	// Message explains the verdict.
	// +optional
	Message string `json:"message,omitempty"`
}

// PluginStatus is what the kernel made of the plugin.
type PluginStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Origin is git or agent.
	// +optional
	Origin Origin `json:"origin,omitempty"`
	// CodeHash is the hash of the code last submitted.
	// +optional
	CodeHash string `json:"codeHash,omitempty"`
	// Submission identifies the manifest and code last submitted, so the
	// same submission is never made twice.
	// +optional
	Submission string `json:"submission,omitempty"`
	// SubmittedGeneration is the generation whose spec Submission
	// describes. A submission answers for that generation only: a later
	// spec with the same manifest and code (a person reverting to it) is
	// a new request, never taken as already made.
	// +optional
	SubmittedGeneration int64 `json:"submittedGeneration,omitempty"`
	// Verdict is the judge's answer to that submission.
	// +optional
	Verdict *Verdict `json:"verdict,omitempty"`
	// Conditions: Judged, Approved, Mounted, Ready, Reconciling, Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ApprovalRef names the Approval waiting for a human, if any.
	// +optional
	ApprovalRef *corev1.LocalObjectReference `json:"approvalRef,omitempty"`
	// LastEdit is what became of a person's last edit of an agent-made
	// Plugin's spec. A rejected edit leaves the spec showing what the
	// kernel runs again; this says why.
	// +optional
	LastEdit *Edit `json:"lastEdit,omitempty"`
	// Capabilities is the capability set the kernel holds the plugin to:
	// derived from its declaration (the scopes it names, and what its keys
	// and points require) when it was mounted, and checked on every call.
	// +listType=set
	// +optional
	Capabilities []string `json:"capabilities,omitempty"`
}

// Edit is a person's edit of an agent-made Plugin's spec and the kernel's
// answer to it.
type Edit struct {
	// Generation is the Plugin's generation the edit made.
	Generation int64 `json:"generation"`
	// By is who made the edit.
	// +optional
	By string `json:"by,omitempty"`
	// Result is mounted, pending or rejected.
	Result VerdictResult `json:"result"`
	// Message says why, for a rejection the gate and its reason.
	// +optional
	Message string `json:"message,omitempty"`
}

// Plugin is an agent plugin running in a tenant's kernel.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=sms
// +kubebuilder:printcolumn:name="Tenant",type=string,JSONPath=`.spec.tenantRef.name`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.spec.id`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict.result`
// +kubebuilder:printcolumn:name="Mounted",type=string,JSONPath=`.status.conditions[?(@.type=="Mounted")].status`
// +kubebuilder:printcolumn:name="Origin",type=string,JSONPath=`.status.origin`,priority=1
// +kubebuilder:printcolumn:name="Last-Edit",type=string,JSONPath=`.status.lastEdit.result`,priority=1
// +kubebuilder:printcolumn:name="Edit-Message",type=string,JSONPath=`.status.lastEdit.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Plugin struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PluginSpec   `json:"spec,omitempty"`
	Status PluginStatus `json:"status,omitempty"`
}

// PluginList is a list of Plugins.
// +kubebuilder:object:root=true
type PluginList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Plugin `json:"items"`
}
