// Package webhook holds the operator's admission webhooks, registered on a
// controller-runtime manager's webhook server by Register.
//
// They record who did what on the objects a human acts on, so that
// nobody can forge it:
//
//   - Plugin (mutating, /mutate-sms-dev-v1-plugin): the annotation
//     sms.dev/requested-by names the user who created the Plugin or last
//     changed its spec. An update that leaves spec alone gets the old value
//     back, whatever it sent. A Plugin a person creates also gets the
//     operator's finalizer sms.dev/uninstall, which spares the operator a
//     write per Plugin (its reconcile adds it when admission did not).
//   - Approval (mutating, /mutate-sms-dev-v1-approval): sms.dev/decided-by
//     and sms.dev/decided-at name the user who set spec.decision and when
//     (RFC 3339, UTC), stamped in the request that sets it (an update from
//     empty, or a create with a decision: a pre-approved Approval from
//     git). Any other request gets the old values back, or none on create.
//   - Approval (validating, /validate-sms-dev-v1-approval): a decision,
//     once set, never changes; whoever sets it needs the verb "approve" on
//     approvals.sms.dev in the namespace (checked with a
//     SubjectAccessReview carrying the request's user, groups, uid and
//     extra), and may not approve a plugin they requested when the
//     tenant's judge policy sets forbidSelfApproval. A person's Approval
//     is a pre-approval: a create that sets spec.kernelApprovalId,
//     spec.reasons or spec.requestedBy (copied by the operator from the
//     kernel's request) is refused, and so is one without
//     spec.declaration; an update may not change the fields an Approval
//     is bound to.
//
// The operator's own identity (Options.OperatorUser) is trusted: it keeps
// the annotations it sends, because it mirrors plugins and decisions made
// inside a kernel whose requester and decider come from the kernel, and it
// may set a decision without the checks above, except that a decision
// never changes.
//
// The webhooks read Plugins and Tenants through the manager's API reader,
// not its cache, so that a Plugin created just before its Approval is
// seen. A Plugin or Tenant that does not exist does not block a decision.
// Any other error refuses the request (failurePolicy is fail as well).
package webhook
