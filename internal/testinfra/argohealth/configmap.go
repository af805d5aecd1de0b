package argohealth

import (
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// Kinds are the kinds the project ships health checks for, in group sms.dev.
var Kinds = []string{"Approval", "Plugin", "Tenant"}

// Group is the API group of Kinds.
const Group = "sms.dev"

// ConfigMapPath is the argocd-cm patch that installs the checks.
func ConfigMapPath() string {
	return filepath.Join(Root(), "..", "argocd-cm.yaml")
}

// ConfigMap renders the argocd-cm patch from the health checks: one
// resource.customizations.health.<group>_<Kind> key per kind.
func ConfigMap() ([]byte, error) {
	data := map[string]string{}
	for _, kind := range Kinds {
		script, err := Script(Group, kind)
		if err != nil {
			return nil, err
		}
		data["resource.customizations.health."+Group+"_"+kind] = script
	}
	cm := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd",
			"labels": map[string]string{"app.kubernetes.io/part-of": "argocd"}},
		"data": data,
	}
	b, err := yaml.Marshal(cm)
	if err != nil {
		return nil, err
	}
	head := "# Argo CD health checks for sms.dev Tenants, Plugins and Approvals, as a\n" +
		"# patch of argocd-cm. Generated from resource_customizations/ by\n" +
		"# SMS_UPDATE_ARGOCD=1 go test ./internal/testinfra/argohealth; do not edit.\n"
	return append([]byte(head), b...), nil
}

// WriteConfigMap rewrites the argocd-cm patch.
func WriteConfigMap() error {
	b, err := ConfigMap()
	if err != nil {
		return err
	}
	return os.WriteFile(ConfigMapPath(), b, 0o644)
}
