// Package v1 is the sms.dev/v1 API the operator serves: Tenant (one kernel
// and its storage, model and judge policy), Plugin (an agent plugin
// submitted to a tenant's kernel, from git or mirrored from the agent) and
// Approval (a human's decision on a plugin the judge parked, bound to the
// kernel's request, the exact code it judged and the declaration it
// covers).
//
// Status follows the kstatus conventions: observedGeneration and the
// Ready, Reconciling and Stalled conditions, so kubectl wait, Argo CD and
// Flux read health without custom configuration.
//
// +kubebuilder:object:generate=true
// +groupName=sms.dev
package v1
