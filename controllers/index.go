package controllers

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// Field indexes on the cache, so a mapping or a lookup reads the objects
// it needs instead of listing a whole namespace.
const (
	// indexPluginTenant indexes Plugins by spec.tenantRef.name.
	indexPluginTenant = "spec.tenantRef.name"
	// indexPluginKernelID indexes Plugins by "<tenant>/<spec.id>": the
	// kernel plugin an object stands for.
	indexPluginKernelID = "sms.kernelID"
	// indexPluginCodeFrom indexes Plugins by spec.codeFrom.name.
	indexPluginCodeFrom = "spec.codeFrom.name"
	// indexApprovalPlugin indexes Approvals by spec.pluginRef.name.
	indexApprovalPlugin = "spec.pluginRef.name"
	// indexApprovalKernel indexes the Approvals the operator made by
	// "<spec.pluginRef.name>/<spec.kernelApprovalId>": the kernel request
	// they answer (kernel approval ids are per tenant, Plugins per
	// namespace).
	indexApprovalKernel = "sms.kernelApproval"
	// indexTenantRefs indexes Tenants by the Secrets ("secret/<name>")
	// and ConfigMaps ("configmap/<name>") they reference.
	indexTenantRefs = "sms.references"
)

// tenantRefs are the values of indexTenantRefs for t.
func tenantRefs(t *smsv1.Tenant) []string {
	var out []string
	if m := t.Spec.Model; m != nil {
		if m.KeySecretRef != nil {
			out = append(out, "secret/"+m.KeySecretRef.Name)
		}
		if m.ScriptConfigMapRef != nil {
			out = append(out, "configmap/"+m.ScriptConfigMapRef.Name)
		}
	}
	if pg := t.Spec.Storage.Postgres; pg != nil {
		out = append(out, "secret/"+pg.URLSecretRef.Name)
	}
	if o := t.Spec.Objects; o != nil && o.S3 != nil {
		out = append(out, "secret/"+o.S3.CredentialsSecretRef.Name)
	}
	if u := t.Spec.Users; u != nil && u.BootstrapAdminSecretRef != nil {
		out = append(out, "secret/"+u.BootstrapAdminSecretRef.Name)
	}
	return out
}

// kernelID is the value of indexPluginKernelID.
func kernelID(tenant, id string) string { return tenant + "/" + id }

// addIndexes registers the field indexes with the manager's cache.
func addIndexes(ctx context.Context, idx client.FieldIndexer) error {
	plugin := func(f func(*smsv1.Plugin) []string) client.IndexerFunc {
		return func(o client.Object) []string {
			if p, ok := o.(*smsv1.Plugin); ok {
				return f(p)
			}
			return nil
		}
	}
	for field, fn := range map[string]client.IndexerFunc{
		indexPluginTenant:   plugin(func(p *smsv1.Plugin) []string { return []string{p.Spec.TenantRef.Name} }),
		indexPluginKernelID: plugin(func(p *smsv1.Plugin) []string { return []string{kernelID(p.Spec.TenantRef.Name, p.Spec.ID)} }),
		indexPluginCodeFrom: plugin(func(p *smsv1.Plugin) []string {
			if p.Spec.CodeFrom == nil {
				return nil
			}
			return []string{p.Spec.CodeFrom.Name}
		}),
	} {
		if err := idx.IndexField(ctx, &smsv1.Plugin{}, field, fn); err != nil {
			return err
		}
	}
	err := idx.IndexField(ctx, &smsv1.Tenant{}, indexTenantRefs, func(o client.Object) []string {
		if t, ok := o.(*smsv1.Tenant); ok {
			return tenantRefs(t)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = idx.IndexField(ctx, &smsv1.Approval{}, indexApprovalPlugin, func(o client.Object) []string {
		if a, ok := o.(*smsv1.Approval); ok {
			return []string{a.Spec.PluginRef.Name}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return idx.IndexField(ctx, &smsv1.Approval{}, indexApprovalKernel, func(o client.Object) []string {
		if a, ok := o.(*smsv1.Approval); ok && a.Spec.KernelApprovalID != "" {
			return []string{kernelApproval(a.Spec.PluginRef.Name, a.Spec.KernelApprovalID)}
		}
		return nil
	})
}

// kernelApproval is the value of indexApprovalKernel.
func kernelApproval(plugin, id string) string { return plugin + "/" + id }

// pluginsOf lists the Plugins in ns whose field matches value.
func (d *Deps) pluginsOf(ctx context.Context, ns, field, value string) ([]smsv1.Plugin, error) {
	var list smsv1.PluginList
	if err := d.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{field: value}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// approvalsOf lists the Approvals in ns of Plugin plugin.
func (d *Deps) approvalsOf(ctx context.Context, ns, plugin string) ([]smsv1.Approval, error) {
	var list smsv1.ApprovalList
	err := d.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{indexApprovalPlugin: plugin})
	return list.Items, err
}

// approvalsByKernelID lists the Approvals in ns the operator made for
// Plugin plugin's kernel approval id, whatever their state.
func (d *Deps) approvalsByKernelID(ctx context.Context, ns, plugin, id string) ([]smsv1.Approval, error) {
	var list smsv1.ApprovalList
	err := d.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{indexApprovalKernel: kernelApproval(plugin, id)})
	return list.Items, err
}
