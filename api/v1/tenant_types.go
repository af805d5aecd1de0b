package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageDriver names where a tenant's kernel persists.
// +kubebuilder:validation:Enum=sqlite;postgres
type StorageDriver string

// Storage drivers.
const (
	StorageSQLite   StorageDriver = "sqlite"
	StoragePostgres StorageDriver = "postgres"
)

// TenantStorage is where the kernel keeps its event log, blobs and the
// collections' tables.
// +kubebuilder:validation:XValidation:rule="self.driver != 'postgres' || has(self.postgres)",message="storage.postgres is required when driver is postgres"
type TenantStorage struct {
	// Driver is sqlite (a file on a PersistentVolumeClaim, the default) or
	// postgres (a schema in an existing database).
	// +kubebuilder:default=sqlite
	// +optional
	Driver StorageDriver `json:"driver,omitempty"`
	// SQLite configures the volume of the sqlite driver.
	// +optional
	SQLite *SQLiteStorage `json:"sqlite,omitempty"`
	// Postgres configures the postgres driver.
	// +optional
	Postgres *PostgresStorage `json:"postgres,omitempty"`
}

// SQLiteStorage sizes the kernel's PersistentVolumeClaim.
type SQLiteStorage struct {
	// Size of the volume. Default 1Gi.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// StorageClassName of the volume; empty uses the cluster's default class.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// PostgresStorage points the kernel at a schema of an existing database.
type PostgresStorage struct {
	// URLSecretRef names a key of a Secret in the tenant's namespace holding
	// a postgres:// URL.
	URLSecretRef corev1.SecretKeySelector `json:"urlSecretRef"`
	// Schema is the tenant's schema. Default: tenant_<name> with dashes
	// turned into underscores.
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	// +optional
	Schema string `json:"schema,omitempty"`
}

// ModelProvider names a model driver.
// +kubebuilder:validation:Enum=scripted;anthropic;openai;openaicompat;claude-cli;codex-cli
type ModelProvider string

// Model providers: the names of the kernel's model drivers, in the order
// the enum above and the kernel's help list them.
const (
	// ModelScripted replays a script, for demos and tests.
	ModelScripted ModelProvider = "scripted"
	// ModelAnthropic is the Anthropic Messages API.
	ModelAnthropic ModelProvider = "anthropic"
	// ModelOpenAI is the OpenAI Responses API.
	ModelOpenAI ModelProvider = "openai"
	// ModelOpenAICompat is a Chat Completions endpoint (OpenRouter,
	// Ollama, vLLM) reached through a base URL.
	ModelOpenAICompat ModelProvider = "openaicompat"
	// ModelClaudeCLI runs the claude CLI on the login of the machine or
	// image the kernel runs in (claude login), with no API key.
	ModelClaudeCLI ModelProvider = "claude-cli"
	// ModelCodexCLI runs the codex CLI on the login of the machine or
	// image the kernel runs in (codex login), with no API key.
	ModelCodexCLI ModelProvider = "codex-cli"
)

// ModelProviders lists every ModelProvider, in the enum's order.
var ModelProviders = []ModelProvider{ModelScripted, ModelAnthropic, ModelOpenAI, ModelOpenAICompat, ModelClaudeCLI, ModelCodexCLI}

// TenantModel is the chat agent's model. Without one the kernel runs no
// chat agent. The efforts and thinking budgets each provider takes are
// those of its driver (docs/chat.md); a test keeps the rules below equal
// to them.
// +kubebuilder:validation:XValidation:rule="!has(self.effort) || (self.provider == 'anthropic' && self.effort in ['low', 'medium', 'high', 'xhigh', 'max']) || (self.provider == 'openai' && self.effort in ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']) || (self.provider == 'openaicompat' && self.effort in ['none', 'minimal', 'low', 'medium', 'high', 'xhigh']) || (self.provider == 'claude-cli' && self.effort in ['low', 'medium', 'high', 'xhigh', 'max']) || (self.provider == 'codex-cli' && self.effort in ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])",message="spec.model.effort is not an effort this provider takes (docs/chat.md lists them)"
// +kubebuilder:validation:XValidation:rule="!has(self.thinkingBudget) || self.provider in ['anthropic', 'openaicompat']",message="spec.model.thinkingBudget is taken by the anthropic and openaicompat providers only"
// +kubebuilder:validation:XValidation:rule="!has(self.thinkingBudget) || self.provider != 'anthropic' || self.thinkingBudget >= 1024",message="spec.model.thinkingBudget is at least 1024 tokens for anthropic"
// +kubebuilder:validation:XValidation:rule="!(has(self.effort) && has(self.thinkingBudget) && self.provider == 'openaicompat')",message="openaicompat takes spec.model.effort or spec.model.thinkingBudget, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.baseURL) || !(self.provider in ['claude-cli', 'codex-cli'])",message="a CLI provider runs on the login where the kernel runs; spec.model.baseURL would send that login elsewhere"
type TenantModel struct {
	// Provider is scripted (replays a script, for demos and tests),
	// anthropic, openai, openaicompat (OpenRouter, Ollama, vLLM),
	// claude-cli or codex-cli (a logged-in CLI where the kernel runs).
	Provider ModelProvider `json:"provider"`
	// Name is the provider's model name; required except for scripted
	// and the CLIs (which default to their own).
	// +optional
	Name string `json:"name,omitempty"`
	// BaseURL overrides the provider's endpoint; required for openaicompat,
	// refused for the CLI providers (it would send the login of the
	// machine the kernel runs on elsewhere).
	// +optional
	BaseURL string `json:"baseURL,omitempty"`
	// KeySecretRef names a key of a Secret holding the API key.
	// +optional
	KeySecretRef *corev1.SecretKeySelector `json:"keySecretRef,omitempty"`
	// ScriptConfigMapRef names a key of a ConfigMap holding the scripted
	// model's JSON script; required for scripted.
	// +optional
	ScriptConfigMapRef *corev1.ConfigMapKeySelector `json:"scriptConfigMapRef,omitempty"`
	// Effort is how hard the model reasons (low, medium, high, and the
	// further levels its provider has); empty leaves it to the provider.
	// Anthropic then thinks adaptively, OpenRouter gets its unified
	// reasoning effort.
	// +optional
	Effort string `json:"effort,omitempty"`
	// ThinkingBudget is the most tokens the model reasons with
	// (anthropic: extended thinking; openaicompat: OpenRouter's reasoning
	// budget).
	// +kubebuilder:validation:Minimum=1
	// +optional
	ThinkingBudget int32 `json:"thinkingBudget,omitempty"`
}

// TenantJudge is the judge's approval policy.
type TenantJudge struct {
	// SensitiveScopes replace the judge's default sensitive scopes.
	// +optional
	SensitiveScopes []string `json:"sensitiveScopes,omitempty"`
	// SensitivePoints replace the judge's default sensitive points.
	// +optional
	SensitivePoints []string `json:"sensitivePoints,omitempty"`
	// AutoApprove mounts sensitive plugins without a human and taints the
	// kernel.
	// +optional
	AutoApprove bool `json:"autoApprove,omitempty"`
	// ApprovalTTL denies an Approval left undecided this long. Default 24h.
	// +optional
	ApprovalTTL *metav1.Duration `json:"approvalTTL,omitempty"`
	// ForbidSelfApproval refuses a decision by the user who requested the
	// plugin.
	// +optional
	ForbidSelfApproval bool `json:"forbidSelfApproval,omitempty"`
	// AgentCapabilities is what a user or credential without the admin
	// scope may give the plugins it submits or the chat agent writes for
	// it (db.read, db.write, db.schema, http.route, schedule, automation,
	// agent.tool, ui, net, model.complete); the judge refuses a plugin that
	// needs more. Unset: every capability.
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Enum=db.read;db.write;db.schema;http.route;schedule;automation;agent.tool;ui;net;model.complete
	// +optional
	AgentCapabilities []string `json:"agentCapabilities,omitempty"`
	// Approvers is how many distinct people must approve a sensitive
	// plugin; with more than one, or with ApproverGroups, the requester's
	// approval never counts. The first sets the decision on the operator's
	// Approval; each other writes an Approval of their own for the same
	// plugin, code hash and declaration (kubectl sms approve does). Each
	// approval counted shows in the Approval's status.decisions. Default 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	Approvers *int32 `json:"approvers,omitempty"`
	// ApproverGroups are the Kubernetes groups an approver must be in (one
	// of them) for the approval to count. Unset: any.
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	ApproverGroups []string `json:"approverGroups,omitempty"`
}

// Executor names where a kernel runs agent code.
// +kubebuilder:validation:Enum=isolated;goja
type Executor string

// SystemPlugin names an optional system plugin of a Tenant's kernels.
// +kubebuilder:validation:Enum=audit;automation;meta;rpc;console
type SystemPlugin string

// The optional system plugins (the kernel's --system-plugins names).
const (
	SystemPluginAudit      SystemPlugin = "audit"
	SystemPluginAutomation SystemPlugin = "automation"
	SystemPluginMeta       SystemPlugin = "meta"
	SystemPluginRPC        SystemPlugin = "rpc"
	SystemPluginConsole    SystemPlugin = "console"
)

// SystemPlugins lists every SystemPlugin, in the kernel's install order.
var SystemPlugins = []SystemPlugin{SystemPluginAudit, SystemPluginAutomation, SystemPluginMeta, SystemPluginRPC, SystemPluginConsole}

// Executors: the names of the kernel's executor drivers, the default
// first.
const (
	// ExecutorIsolated runs agent code in child processes under OS
	// limits; the default.
	ExecutorIsolated Executor = "isolated"
	// ExecutorGoja runs agent code in the kernel's process.
	ExecutorGoja Executor = "goja"
)

// Executors lists every Executor, in the enum's order.
var Executors = []Executor{ExecutorIsolated, ExecutorGoja}

// TenantSpec is the desired state of a tenant's kernel.
type TenantSpec struct {
	// Storage is where the kernel persists. Default: sqlite on a 1Gi volume.
	// +optional
	Storage TenantStorage `json:"storage,omitempty"`
	// Model is the chat agent's model.
	// +optional
	Model *TenantModel `json:"model,omitempty"`
	// Judge is the approval policy.
	// +optional
	Judge TenantJudge `json:"judge,omitempty"`
	// Executor runs agent code: isolated (child processes under OS limits,
	// the default) or goja (in the kernel's process).
	// +kubebuilder:default=isolated
	// +optional
	Executor Executor `json:"executor,omitempty"`
	// SandboxIdle is how long an agent plugin's sandbox process (the
	// isolated executor's) lives without a call before it exits; the
	// plugin stays mounted and its next call starts a process again,
	// replaying its activation. Default 1m; a negative duration keeps
	// every plugin's process for as long as it is mounted.
	// +optional
	SandboxIdle *metav1.Duration `json:"sandboxIdle,omitempty"`
	// SystemPlugins turns optional system plugins on: audit (messages,
	// followers, activities and tracked fields on records), automation
	// (actions on writes and on a schedule), meta (views, actions, menus)
	// rpc (batched ORM calls at /api/rpc) and console (a page at /console
	// to chat with the agent and see its plugins). All are off by default;
	// turning one off keeps its tables. The API server refuses an unknown
	// name, listing the valid ones, and a name given twice.
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +optional
	SystemPlugins []SystemPlugin `json:"systemPlugins,omitempty"`
	// Objects is where the tenant's files go (the ORM's binary fields);
	// without it the kernel has no object store and uploads answer 404.
	// +optional
	Objects *TenantObjects `json:"objects,omitempty"`
	// Resources of the kernel container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Image overrides the kernel image. Default: the operator's own image,
	// so operator and kernel versions move together.
	// +optional
	Image string `json:"image,omitempty"`
	// Suspend scales the kernel to zero; its data is kept.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// SafeMode boots the kernel with system plugins only (manager kernel
	// --safe-mode): agent plugins stay in its log, listed and inactive,
	// and none can be mounted. Nothing is lost; turning it off brings them
	// back. For a kernel that a plugin keeps from serving.
	// +optional
	SafeMode bool `json:"safeMode,omitempty"`
	// Budget limits what agent work may use per period: model tokens and
	// their cost, wall time in agent code and rows written, per tenant,
	// per user and per agent plugin. The kernel counts them either way.
	// +optional
	Budget *TenantBudget `json:"budget,omitempty"`
	// Agent configures the chat agent when the tenant has a model.
	// +optional
	Agent *TenantAgent `json:"agent,omitempty"`
	// Users turns on the application's users and access control in the
	// kernel (sessions, groups, record rules; docs/auth.md). Without it
	// the data is open to whoever the credentials admit. No user session
	// ever carries approve: decisions come through Approval objects.
	// +optional
	Users *TenantUsers `json:"users,omitempty"`
}

// TenantUsers configures the kernel's users.
type TenantUsers struct {
	// BootstrapAdminSecretRef names a Secret in the tenant's namespace
	// with the keys "login" and "password" (SecretKeyLogin,
	// SecretKeyPassword): the first admin, created when no user has that
	// login. A later change to the Secret never resets a password
	// changed since.
	// +optional
	BootstrapAdminSecretRef *corev1.LocalObjectReference `json:"bootstrapAdminSecretRef,omitempty"`
	// KubernetesUsers maps an application login to the Kubernetes user
	// who is the same person, for judge.forbidSelfApproval: a plugin the
	// agent defined in a chat of user:<login> may not be approved by that
	// Kubernetes user. A login not listed is the Kubernetes user of the
	// same name, so an unmapped name can only forbid more.
	// +optional
	KubernetesUsers map[string]string `json:"kubernetesUsers,omitempty"`
}

// PluginCounts counts a tenant's agent plugins by state.
type PluginCounts struct {
	Mounted int32 `json:"mounted"`
	Pending int32 `json:"pending"`
	Failed  int32 `json:"failed"`
	// Quarantined counts the plugins the kernel quarantined: their sandbox
	// stopped, or their activations kept failing.
	// +optional
	Quarantined int32 `json:"quarantined,omitempty"`
}

// TenantAgent configures a tenant's chat agent.
type TenantAgent struct {
	// Identity is the first line of the agent's system prompt: who it is
	// for this application. Default: the agent loop's own.
	// +kubebuilder:validation:MaxLength=2000
	// +optional
	Identity string `json:"identity,omitempty"`
	// MaxSteps caps the model calls of one chat turn. Default 8.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	MaxSteps int32 `json:"maxSteps,omitempty"`
}

// TenantStatus is the observed state of a tenant's kernel.
type TenantStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Reconciling, Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Endpoint is the address of the kernel's application routes.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// AdminEndpoint is the address of the kernel's admin API. In a cluster
	// it is a port of its own that a NetworkPolicy opens to the operator
	// only; reach it with a port forward.
	// +optional
	AdminEndpoint string `json:"adminEndpoint,omitempty"`
	// AdminTokenSecret names the Secret holding the operator's credential
	// for the kernel: every scope, approve included. Only the operator
	// should read it; people approve through Approval objects.
	// +optional
	AdminTokenSecret string `json:"adminTokenSecret,omitempty"`
	// ChatTokenSecret names the Secret holding the credential people use
	// with kubectl sms, under key "token" (SecretKeyToken): read and chat,
	// never approve.
	// +optional
	ChatTokenSecret string `json:"chatTokenSecret,omitempty"`
	// Plugins counts the kernel's agent plugins.
	// +optional
	Plugins *PluginCounts `json:"plugins,omitempty"`
	// Taint lists the kernel's sticky taint flags (auto-approval, ...).
	// +optional
	Taint []string `json:"taint,omitempty"`
	// Users reports whether the kernel has application users, as the
	// kernel itself says (spec.users asks for them).
	// +optional
	Users bool `json:"users,omitempty"`
	// SafeMode reports whether the kernel runs in safe mode, as the kernel
	// itself says (spec.safeMode asks for it).
	// +optional
	SafeMode bool `json:"safeMode,omitempty"`
	// Budget is what the tenant used in its budget's current period, as
	// the kernel counts it.
	// +optional
	Budget *TenantBudgetStatus `json:"budget,omitempty"`
}

// Tenant runs one kernel: its storage, model and judge policy.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=sms
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Mounted",type=integer,JSONPath=`.status.plugins.mounted`
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=`.status.plugins.pending`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TenantSpec   `json:"spec,omitempty"`
	Status TenantStatus `json:"status,omitempty"`
}

// TenantList is a list of Tenants.
// +kubebuilder:object:root=true
type TenantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Tenant `json:"items"`
}
