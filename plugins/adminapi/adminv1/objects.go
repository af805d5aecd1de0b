package adminv1

// TenantRef names the Tenant a kernel runs for under the operator.
type TenantRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// ApprovalObject says where the operator asks a human about a pending
// approval: the Approval it creates in the Tenant's namespace, which
// records the kernel's approval id (spec.kernelApprovalId), and the
// command that approves it whatever the Approval is named (the operator
// names it after its Plugin object, which the kernel does not know for a
// Plugin a person applied).
type ApprovalObject struct {
	Namespace        string `json:"namespace"`
	Tenant           string `json:"tenant"`
	KernelApprovalID string `json:"kernelApprovalId"`
	// Command approves it with kubectl.
	Command string `json:"command"`
}

// NewApprovalObject is where the operator of tenant asks about kernel
// approval id.
func NewApprovalObject(tenant TenantRef, id string) *ApprovalObject {
	return &ApprovalObject{Namespace: tenant.Namespace, Tenant: tenant.Name, KernelApprovalID: id,
		Command: "kubectl sms approve -n " + tenant.Namespace + " --tenant " + tenant.Name + " kernel-approval/" + id}
}
