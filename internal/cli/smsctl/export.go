package smsctl

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// newExportCommand returns export: mounted plugins as Plugin YAML for git.
func newExportCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "export TENANT",
		Short: "Print the tenant's mounted plugins, agent-made ones included, as Plugin YAML to commit to git",
		Long: `Print the tenant's mounted plugins as Plugin objects with only what belongs in git: name,
labels and annotations of your own, and spec. Plugins the agent made lose their sms.dev/origin
label, so once applied from git they are yours, judged like any other.`,
		Example: "  kubectl sms export demo > plugins.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.export(cmd.Context(), args[0])
		},
	}
}

func (o *options) export(ctx context.Context, tenant string) error {
	c, ns, err := o.client()
	if err != nil {
		return err
	}
	var t smsv1.Tenant
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: tenant}, &t); err != nil {
		return notFound(err, "tenant", tenant, ns)
	}
	var list smsv1.PluginList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return err
	}
	var out []smsv1.Plugin
	for _, p := range list.Items {
		if p.Spec.TenantRef.Name == tenant && meta.IsStatusConditionTrue(p.Status.Conditions, smsv1.ConditionMounted) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("tenant %s has no mounted plugins", tenant)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec.ID < out[j].Spec.ID })
	return writePlugins(o.Out, out)
}

// writePlugins writes plugins as YAML documents without status or any
// field the API server or the operator set.
func writePlugins(w io.Writer, plugins []smsv1.Plugin) error {
	for i, p := range plugins {
		doc := map[string]any{
			"apiVersion": smsv1.GroupVersion.String(),
			"kind":       "Plugin",
			"metadata":   cleanMeta(p),
			"spec":       p.Spec,
		}
		raw, err := yaml.Marshal(doc)
		if err != nil {
			return fmt.Errorf("plugin %s: %w", p.Name, err)
		}
		if i > 0 {
			raw = append([]byte("---\n"), raw...)
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
	}
	return nil
}

// cleanMeta keeps the name and the user's own labels and annotations.
func cleanMeta(p smsv1.Plugin) map[string]any {
	m := map[string]any{"name": p.Name}
	if l := ownKeys(p.Labels); len(l) > 0 {
		m["labels"] = l
	}
	if a := ownKeys(p.Annotations); len(a) > 0 {
		m["annotations"] = a
	}
	return m
}

// ownKeys drops the keys sms.dev and kubectl set.
func ownKeys(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if strings.HasPrefix(k, smsv1.GroupVersion.Group+"/") || strings.HasPrefix(k, "kubectl.kubernetes.io/") {
			continue
		}
		out[k] = v
	}
	return out
}
