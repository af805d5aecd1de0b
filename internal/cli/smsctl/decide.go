package smsctl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// newDecideCommand returns approve (approve true) or deny.
func newDecideCommand(o *options, approve bool) *cobra.Command {
	verb, decision := "deny", smsv1.DecisionDenied
	if approve {
		verb, decision = "approve", smsv1.DecisionApproved
	}
	var message, tenant string
	cmd := &cobra.Command{
		Use:     verb + " PLUGIN|APPROVAL",
		Short:   strings.ToUpper(verb[:1]) + verb[1:] + " a plugin waiting for a human: name the Plugin or its Approval",
		Example: fmt.Sprintf("  kubectl sms %s demo-pending -m 'reviewed the code'\n  kubectl sms %s approval/demo-pending-3f2a9c1b0d", verb, verb),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.decide(cmd.Context(), decideArgs{name: args[0], tenant: tenant}, decision, message)
		},
	}
	cmd.Flags().StringVarP(&message, "message", "m", "", "why, recorded on the Approval")
	cmd.Flags().StringVar(&tenant, "tenant", "", "with kernel-approval/ID, the Tenant whose kernel asks (two Tenants may ask about the same code)")
	return cmd
}

// decide prints what the Approval that name denotes asks about (the
// declaration the decision covers), then sets the decision on it. The
// webhook checks the user may approve and records who did.
func (o *options) decide(ctx context.Context, what decideArgs, d smsv1.Decision, message string) error {
	c, ns, err := o.client()
	if err != nil {
		return err
	}
	a, err := findApproval(ctx, c, ns, what)
	if err != nil {
		return err
	}
	if a.Spec.Decision != "" {
		if d == smsv1.DecisionApproved && awaitingApprovers(a) {
			return o.approveToo(ctx, c, a, message)
		}
		return fmt.Errorf("approval %s was already %s%s; a decision cannot change", a.Name, strings.ToLower(string(a.Spec.Decision)), by(a))
	}
	if err := writeRequest(o.Out, a); err != nil {
		return err
	}
	spec := map[string]any{"decision": d}
	if message != "" {
		spec["message"] = message
	}
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, a, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("set decision %s on approval %s: %w", d, a.Name, err)
	}
	_, err = fmt.Fprintf(o.Out, "approval.sms.dev/%s %s (plugin %s, id %s)\n", a.Name, strings.ToLower(string(d)), a.Spec.PluginRef.Name, a.Spec.PluginID)
	return err
}

func by(a *smsv1.Approval) string {
	if a.Status.DecidedBy == "" {
		return ""
	}
	return " by " + a.Status.DecidedBy
}

// decideArgs name the Approval approve or deny decides.
type decideArgs struct {
	name   string
	tenant string // with kernel-approval/ID: the Tenant whose kernel asks
}

// findApproval resolves what.name: an Approval ("approval/NAME" or NAME),
// else a Plugin ("plugin/NAME" or NAME) whose status points at its
// Approval; "kernel-approval/ID" is the undecided Approval of a kernel's
// approval id (of what.tenant's kernel), as a kernel's console names it.
func findApproval(ctx context.Context, c client.Client, ns string, what decideArgs) (*smsv1.Approval, error) {
	name := what.name
	kind, bare := "", name
	if k, n, ok := strings.Cut(name, "/"); ok {
		kind, bare = strings.TrimSuffix(strings.TrimSuffix(k, ".sms.dev"), "s"), n
	}
	if what.tenant != "" && kind != "kernel-approval" {
		return nil, fmt.Errorf("--tenant picks among the Approvals of kernel-approval/ID, not of %q", name)
	}
	switch kind {
	case "", "approval", "plugin":
	case "kernel-approval":
		return byKernelApproval(ctx, c, ns, decideArgs{name: bare, tenant: what.tenant})
	default:
		return nil, fmt.Errorf("%q: name a plugin or an approval (plugin/NAME, approval/NAME, kernel-approval/ID or NAME)", name)
	}
	var a smsv1.Approval
	if kind != "plugin" {
		err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: bare}, &a)
		if err == nil || !apierrors.IsNotFound(err) || kind == "approval" {
			return &a, notFound(err, "approval", bare, ns)
		}
	}
	var p smsv1.Plugin
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: bare}, &p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("no plugin or approval named %q in namespace %s", bare, ns)
		}
		return nil, err
	}
	if p.Status.ApprovalRef == nil {
		return nil, fmt.Errorf("plugin %s waits for no approval (verdict: %s)", p.Name, verdict(&p))
	}
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: p.Status.ApprovalRef.Name}, &a)
	return &a, notFound(err, "approval", p.Status.ApprovalRef.Name, ns)
}

func notFound(err error, kind, name, ns string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("no %s named %q in namespace %s", kind, name, ns)
	}
	return err
}

// verdict is a plugin's verdict in a word or two.
func verdict(p *smsv1.Plugin) string {
	v := p.Status.Verdict
	switch {
	case v == nil:
		return "not judged yet"
	case v.Result == smsv1.VerdictRejected && v.Gate != "":
		return string(v.Result) + " by " + v.Gate
	}
	return string(v.Result)
}

// byKernelApproval finds the one undecided Approval in ns for kernel
// approval id what.name, of what.tenant's kernel when that is set.
func byKernelApproval(ctx context.Context, c client.Client, ns string, what decideArgs) (*smsv1.Approval, error) {
	tenant, id := what.tenant, what.name
	var list smsv1.ApprovalList
	opts := []client.ListOption{client.InNamespace(ns)}
	if tenant != "" {
		opts = append(opts, client.MatchingLabels{smsv1.LabelTenant: tenant})
	}
	if err := c.List(ctx, &list, opts...); err != nil {
		return nil, err
	}
	var found []*smsv1.Approval
	for i := range list.Items {
		if a := &list.Items[i]; a.Spec.KernelApprovalID == id && a.Spec.Decision == "" && a.DeletionTimestamp.IsZero() &&
			!meta.IsStatusConditionTrue(a.Status.Conditions, smsv1.ConditionExpired) {
			found = append(found, a)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no undecided approval for kernel approval %s in namespace %s", id, ns)
	case 1:
		return found[0], nil
	}
	names := make([]string, len(found))
	for i, a := range found {
		names[i] = a.Name
	}
	return nil, fmt.Errorf("kernel approval %s has %d undecided approvals in namespace %s (%s): name one", id, len(found), ns, strings.Join(names, ", "))
}

// awaitingApprovers reports whether approval a is approved and its kernel
// waits for the tenant's other approvers.
func awaitingApprovers(a *smsv1.Approval) bool {
	c := meta.FindStatusCondition(a.Status.Conditions, smsv1.ConditionReady)
	return a.Spec.Decision == smsv1.DecisionApproved && c != nil && c.Reason == smsv1.ReasonAwaitingApprovers
}

// approveToo adds the user's approval to one that waits for more
// approvers: an Approval of their own for the same plugin, code hash and
// declaration, which the operator relays as another approver's.
func (o *options) approveToo(ctx context.Context, c client.Client, a *smsv1.Approval, message string) error {
	if err := writeRequest(o.Out, a); err != nil {
		return err
	}
	mine := &smsv1.Approval{ObjectMeta: metav1.ObjectMeta{GenerateName: a.Name + "-", Namespace: a.Namespace},
		Spec: smsv1.ApprovalSpec{PluginRef: a.Spec.PluginRef, PluginID: a.Spec.PluginID, CodeHash: a.Spec.CodeHash,
			Declaration: a.Spec.Declaration.DeepCopy(), Decision: smsv1.DecisionApproved, Message: message}}
	if err := c.Create(ctx, mine); err != nil {
		return fmt.Errorf("add an approval to %s: %w", a.Name, err)
	}
	_, err := fmt.Fprintf(o.Out, "approval.sms.dev/%s approved (plugin %s, id %s): another approver's, beside %s, which %s\n",
		mine.Name, a.Spec.PluginRef.Name, a.Spec.PluginID, a.Name, "waits for the tenant's other approvers")
	return err
}
