package smsctl

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// newStatusCommand returns status: a readable summary of one tenant or of
// every tenant in the namespace.
func newStatusCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "status [TENANT]",
		Short: "Summarise tenants: kernel, plugins with their verdicts, pending approvals, taint",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.status(cmd.Context(), args)
		},
	}
}

// tenantView is what status shows of one tenant.
type tenantView struct {
	tenant    smsv1.Tenant
	plugins   []smsv1.Plugin
	approvals []smsv1.Approval
}

func (o *options) status(ctx context.Context, args []string) error {
	c, ns, err := o.client()
	if err != nil {
		return err
	}
	var tenants []smsv1.Tenant
	if len(args) == 1 {
		var t smsv1.Tenant
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: args[0]}, &t); err != nil {
			return notFound(err, "tenant", args[0], ns)
		}
		tenants = append(tenants, t)
	} else {
		var list smsv1.TenantList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return fmt.Errorf("no tenants in namespace %s", ns)
		}
		tenants = list.Items
	}
	var plugins smsv1.PluginList
	var approvals smsv1.ApprovalList
	if err := c.List(ctx, &plugins, client.InNamespace(ns)); err != nil {
		return err
	}
	if err := c.List(ctx, &approvals, client.InNamespace(ns)); err != nil {
		return err
	}
	for i, t := range tenants {
		if i > 0 {
			if _, err := io.WriteString(o.Out, "\n"); err != nil {
				return err
			}
		}
		if err := writeStatus(o.Out, viewOf(t, plugins.Items, approvals.Items)); err != nil {
			return err
		}
	}
	return nil
}

// viewOf gathers the tenant's plugins and their undecided approvals.
func viewOf(t smsv1.Tenant, plugins []smsv1.Plugin, approvals []smsv1.Approval) tenantView {
	v := tenantView{tenant: t}
	ids := map[string]bool{}
	for _, p := range plugins {
		if p.Spec.TenantRef.Name == t.Name {
			v.plugins = append(v.plugins, p)
			ids[p.Name] = true
		}
	}
	for _, a := range approvals {
		if ids[a.Spec.PluginRef.Name] && a.Spec.Decision == "" && !meta.IsStatusConditionTrue(a.Status.Conditions, smsv1.ConditionExpired) {
			v.approvals = append(v.approvals, a)
		}
	}
	sort.Slice(v.plugins, func(i, j int) bool { return v.plugins[i].Spec.ID < v.plugins[j].Spec.ID })
	return v
}

// writeStatus writes one tenant's summary; tab-separated columns line
// up within each table.
func writeStatus(w io.Writer, v tenantView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := &printer{w: tw}
	t := v.tenant
	p.printf("Tenant %s/%s\n", t.Namespace, t.Name)
	p.printf("  Kernel:    %s\n", kernelLine(t))
	if c := t.Status.Plugins; c != nil {
		p.printf("  Plugins:   %d mounted, %d pending, %d failed\n", c.Mounted, c.Pending, c.Failed)
	}
	taint := "none"
	if len(t.Status.Taint) > 0 {
		taint = strings.Join(t.Status.Taint, ", ")
	}
	p.printf("  Taint:     %s\n", taint)
	if len(v.plugins) > 0 {
		p.printf("\n  PLUGIN\tID\tVERSION\tORIGIN\tVERDICT\tMOUNTED\tREASON\n")
		for _, pl := range v.plugins {
			m := meta.FindStatusCondition(pl.Status.Conditions, smsv1.ConditionMounted)
			mounted, reason := "-", ""
			if m != nil {
				mounted, reason = string(m.Status), m.Reason
			}
			p.printf("  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", pl.Name, pl.Spec.ID, pl.Spec.Version, orDash(string(pl.Status.Origin)), verdict(&pl), mounted, reason)
		}
	}
	if len(v.approvals) > 0 {
		p.printf("\n  Pending approvals (kubectl sms approve NAME):\n  APPROVAL\tPLUGIN\tREASONS\tREQUESTED BY\n")
		for _, a := range v.approvals {
			p.printf("  %s\t%s\t%s\t%s\n", a.Name, a.Spec.PluginRef.Name, strings.Join(a.Spec.Reasons, "; "), orDash(a.Spec.RequestedBy))
		}
	}
	if p.err != nil {
		return p.err
	}
	return tw.Flush()
}

// kernelLine is the kernel's state from the tenant's Ready condition.
func kernelLine(t smsv1.Tenant) string {
	c := meta.FindStatusCondition(t.Status.Conditions, smsv1.ConditionReady)
	if c == nil {
		return "not reconciled yet"
	}
	state := "Ready"
	if c.Status != "True" {
		state = "Not ready: " + c.Reason
		if c.Message != "" {
			state += " (" + c.Message + ")"
		}
	}
	if t.Status.Endpoint != "" {
		state += " at " + t.Status.Endpoint
	}
	return state
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
