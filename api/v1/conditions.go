package v1

// Condition types. Tenant and Plugin use Ready, Reconciling and Stalled
// with their kstatus meanings (Reconciling: the operator is still working
// or waiting; Stalled: nothing changes until the spec does); Plugin adds
// Judged, Approved and Mounted; Approval uses Approved, Denied, Expired
// and Ready.
const (
	ConditionReady       = "Ready"
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"
	ConditionJudged      = "Judged"
	ConditionApproved    = "Approved"
	ConditionMounted     = "Mounted"
	ConditionDenied      = "Denied"
	ConditionExpired     = "Expired"
	// ConditionQuarantined is on a Plugin the kernel quarantined (its
	// sandbox stopped, or its activations kept failing); absent otherwise.
	ConditionQuarantined = "Quarantined"
)

// Condition reasons. A rejection's reason names the gate that refused the
// plugin: Gate followed by the gate's name in title case (GateLint,
// GateTrust, GateLoad, ...); see GateReason.
const (
	ReasonKernelReady       = "KernelReady"
	ReasonKernelStarting    = "KernelStarting"
	ReasonKernelUnreachable = "KernelUnreachable"
	ReasonInvalidSpec       = "InvalidSpec"
	ReasonSuspended         = "Suspended"
	ReasonTenantNotReady    = "TenantNotReady"
	ReasonTenantNotFound    = "TenantNotFound"
	ReasonReferenceNotFound = "ReferenceNotFound"
	ReasonMounted           = "Mounted"
	ReasonPendingApproval   = "PendingApproval"
	ReasonNotRequired       = "NotRequired"
	ReasonApproved          = "Approved"
	ReasonDenied            = "Denied"
	ReasonRejected          = "Rejected"
	ReasonDisabled          = "Disabled"
	ReasonFailed            = "Failed"
	ReasonDependencyMissing = "DependencyMissing"
	ReasonRolledBack        = "RolledBack"
	ReasonAwaitingDecision  = "AwaitingDecision"
	ReasonCodeChanged       = "CodeChanged"
	ReasonTTLExpired        = "TTLExpired"
	ReasonSelfApproval      = "SelfApproval"
	// ReasonAwaitingApprovers: the kernel counted this approval and waits
	// for the tenant's other approvers; ReasonNotCounted: the kernel did
	// not count it (its requester's own, or from outside the tenant's
	// approverGroups).
	ReasonAwaitingApprovers = "AwaitingApprovers"
	ReasonNotCounted        = "NotCounted"
	ReasonQuarantined       = "Quarantined"
	ReasonSafeMode          = "SafeMode"
	// ReasonKernelRefused: the kernel's admin API refused the submission
	// itself (a 4xx, such as a body over its limit). The same spec gets
	// the same answer, so only a new spec is submitted again.
	ReasonKernelRefused = "KernelRefused"
	// ReasonIncompatibleKernel: the tenant's kernel answers a version of
	// the admin API the operator does not speak; its image (spec.image)
	// was built on another release of sms. The message names the image.
	ReasonIncompatibleKernel = "IncompatibleKernel"
	// ReasonBusy: the judge refused the submission for want of capacity
	// (approvals waiting fill its policy's bounds, or the executor runs
	// as many sandboxes as it may), not for anything in the plugin. The
	// plugin is Reconciling: the operator submits the same spec again
	// after its poll interval.
	ReasonBusy = "Busy"
)

// Reasons an Approval expires for besides CodeChanged, TTLExpired and
// SelfApproval: a decision covers the code and the declaration it was
// made on.
const (
	// ReasonDeclarationChanged: the plugin, or the kernel's request, now
	// declares something other than what the Approval names.
	ReasonDeclarationChanged = "DeclarationChanged"
	// ReasonDeclarationMissing: a pre-approval names no declaration, so it
	// cannot say what it approves.
	ReasonDeclarationMissing = "DeclarationMissing"
	// ReasonUnowned: the Approval names a kernel request, but its Plugin
	// does not control it: the operator did not make it (the webhook
	// refuses a kernel approval id from anyone else), so it never answers
	// the request.
	ReasonUnowned = "Unowned"
)

// Labels and annotations the operator reads and writes.
const (
	// LabelTenant is set on everything the operator creates for a tenant.
	LabelTenant = "sms.dev/tenant"
	// LabelOrigin marks Plugins mirrored from a kernel (value "agent").
	LabelOrigin = "sms.dev/origin"
	// AnnotationRequestedBy is stamped on a Plugin by the webhook: the user
	// who last changed its spec.
	AnnotationRequestedBy = "sms.dev/requested-by"
	// AnnotationDecidedBy and AnnotationDecidedAt are stamped on an
	// Approval by the webhook when its decision is set.
	AnnotationDecidedBy = "sms.dev/decided-by"
	AnnotationDecidedAt = "sms.dev/decided-at"
	// AnnotationDecidedGroups is stamped with them: the decider's
	// Kubernetes groups, as a JSON array, which the operator relays so
	// that a tenant's approverGroups can be checked.
	AnnotationDecidedGroups = "sms.dev/decided-groups"
	// AnnotationForceUninstall set to "true" on a Plugin lets its deletion
	// uninstall it even while other enabled plugins inject a key it
	// provides (they lose it); the kernel is tainted forced_uninstall.
	AnnotationForceUninstall = "sms.dev/force-uninstall"
	// AnnotationKernelSubmission, AnnotationKernelCode,
	// AnnotationKernelEnabled and AnnotationKernelInstalled are written by
	// the mirror on agent-made Plugins, in the same apply as the spec they
	// describe: the submission key of the spec it copied from the kernel,
	// the kernel's code hash, whether the kernel runs the plugin enabled,
	// and whether it is installed (not only pending). A spec that no
	// longer matches them was changed by a person, and the kernel follows.
	AnnotationKernelSubmission = "sms.dev/kernel-submission"
	AnnotationKernelCode       = "sms.dev/kernel-code"
	AnnotationKernelEnabled    = "sms.dev/kernel-enabled"
	AnnotationKernelInstalled  = "sms.dev/kernel-installed"
	// FinalizerUninstall uninstalls a Plugin from its kernel on deletion.
	FinalizerUninstall = "sms.dev/uninstall"
)

// GateReason returns the condition reason for a rejection by gate: "lint"
// becomes "GateLint".
func GateReason(gate string) string {
	if gate == "" {
		return ReasonRejected
	}
	out := []byte("Gate")
	upper := true
	for i := 0; i < len(gate); i++ {
		c := gate[i]
		switch {
		case c >= 'a' && c <= 'z' && upper:
			out = append(out, c-'a'+'A')
			upper = false
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			out = append(out, c)
			upper = false
		default:
			upper = true
		}
	}
	return string(out)
}
