package manifests_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/controllers"
	"github.com/sms-baseline/sms/drivers/model/scripted"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// samples is config/samples decoded strictly into the Go types.
type samples struct {
	tenants    []smsv1.Tenant
	plugins    []smsv1.Plugin
	approvals  []smsv1.Approval
	configMaps map[string]corev1.ConfigMap
}

// loadSamples renders config/samples and decodes every object into its Go
// type, failing on a field the type lacks or a kind the samples should
// not hold.
func loadSamples(t *testing.T) samples {
	t.Helper()
	s := samples{configMaps: map[string]corev1.ConfigMap{}}
	for _, o := range render(t, "config/samples") {
		if err := s.add(o); err != nil {
			t.Errorf("sample %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	return s
}

func (s *samples) add(o *unstructured.Unstructured) error {
	switch o.GroupVersionKind() {
	case smsv1.GroupVersion.WithKind("Tenant"):
		var v smsv1.Tenant
		err := decode(o, &v)
		s.tenants = append(s.tenants, v)
		return err
	case smsv1.GroupVersion.WithKind("Plugin"):
		var v smsv1.Plugin
		err := decode(o, &v)
		s.plugins = append(s.plugins, v)
		return err
	case smsv1.GroupVersion.WithKind("Approval"):
		var v smsv1.Approval
		err := decode(o, &v)
		s.approvals = append(s.approvals, v)
		return err
	case corev1.SchemeGroupVersion.WithKind("ConfigMap"):
		var v corev1.ConfigMap
		err := decode(o, &v)
		s.configMaps[v.Name] = v
		return err
	}
	return fmt.Errorf("unexpected kind %s", o.GroupVersionKind())
}

// code returns a sample Plugin's code, inline or from its sample ConfigMap.
func (s *samples) code(p *smsv1.Plugin) (string, error) {
	switch {
	case p.Spec.Code != nil && p.Spec.CodeFrom != nil:
		return "", fmt.Errorf("both code and codeFrom are set")
	case p.Spec.Code != nil:
		return *p.Spec.Code, nil
	case p.Spec.CodeFrom != nil:
		ref := p.Spec.CodeFrom
		code, ok := s.configMaps[ref.Name].Data[ref.Key]
		if !ok {
			return "", fmt.Errorf("codeFrom: no sample ConfigMap %s with key %s", ref.Name, ref.Key)
		}
		return code, nil
	}
	return "", fmt.Errorf("neither code nor codeFrom is set")
}

// Every sample decodes strictly into the api/v1 (or core) Go types, and the
// set is the one the docs promise: the demo Tenant, three Plugins and an
// Approval. Seen failing with spec.judge.approvalTTL misspelt approvalTtl
// in sms_v1_tenant.yaml ("unknown field \"spec.judge.approvalTtl\""), and
// with tenantRef misspelt tenantref in a Plugin.
func TestSamplesDecodeStrictly(t *testing.T) {
	s := loadSamples(t)
	if len(s.tenants) != 1 || s.tenants[0].Name != "demo" {
		t.Errorf("tenant samples = %d, want one named demo", len(s.tenants))
	}
	if len(s.plugins) != 3 || len(s.approvals) != 1 {
		t.Errorf("samples hold %d plugins and %d approvals, want 3 and 1", len(s.plugins), len(s.approvals))
	}
}

// The demo Tenant keeps SQLite, waits a day for approvals, and its scripted
// model's script, read from the sample ConfigMap, is one the scripted driver
// accepts. Seen failing with a block's "type" misspelt "typ" in
// script.json (the driver refuses unknown fields).
func TestSampleTenantScript(t *testing.T) {
	s := loadSamples(t)
	if len(s.tenants) == 0 {
		t.Fatal("no Tenant sample")
	}
	spec := s.tenants[0].Spec
	if spec.Storage.Driver != smsv1.StorageSQLite {
		t.Errorf("storage driver = %q, want sqlite", spec.Storage.Driver)
	}
	if ttl := spec.Judge.ApprovalTTL; ttl == nil || ttl.Duration != 24*time.Hour {
		t.Errorf("judge.approvalTTL = %v, want 24h", ttl)
	}
	m := spec.Model
	if m == nil || m.Provider != "scripted" || m.ScriptConfigMapRef == nil {
		t.Fatalf("model = %+v, want the scripted provider with a scriptConfigMapRef", m)
	}
	script, ok := s.configMaps[m.ScriptConfigMapRef.Name].Data[m.ScriptConfigMapRef.Key]
	if !ok {
		t.Fatalf("no sample ConfigMap %s with key %s", m.ScriptConfigMapRef.Name, m.ScriptConfigMapRef.Key)
	}
	if _, err := scripted.Parse([]byte(script)); err != nil {
		t.Errorf("the sample script: %v", err)
	}
}

// Each sample Plugin belongs to the sample Tenant, has its code (inline or
// from a sample ConfigMap), and a manifest the kernel accepts, with an
// agent id. Whether each gets the verdict its comment promises needs a
// kernel and is not checked here. Seen failing with a Plugin's id changed
// to "greeting" (no agent. prefix) and with codeFrom's key misspelt.
func TestSamplePluginsAreWellFormed(t *testing.T) {
	s := loadSamples(t)
	for i := range s.plugins {
		p := &s.plugins[i]
		if len(s.tenants) == 0 || p.Spec.TenantRef.Name != s.tenants[0].Name {
			t.Errorf("plugin %s: tenantRef %q is not the sample Tenant", p.Name, p.Spec.TenantRef.Name)
		}
		if _, err := s.code(p); err != nil {
			t.Errorf("plugin %s: %v", p.Name, err)
		}
		m := kernel.Manifest{ID: p.Spec.ID, Version: p.Spec.Version, Inject: p.Spec.Inject,
			Optional: p.Spec.Optional, Provide: p.Spec.Provide, Scopes: p.Spec.Scopes}
		if err := m.Validate(); err != nil {
			t.Errorf("plugin %s: %v", p.Name, err)
		}
		if !strings.HasPrefix(p.Spec.ID, judge.AgentPrefix) {
			t.Errorf("plugin %s: id %q does not start with %q", p.Name, p.Spec.ID, judge.AgentPrefix)
		}
	}
}

// The sample Approval approves exactly the code and declaration of the
// Plugin it names: its codeHash is that code's adminv1.HashCode and its
// declaration the Plugin's (controllers.DeclarationOf), so editing the
// plugin's code or points without the Approval fails here. Seen failing
// with one character of the hello plugin's code changed in its ConfigMap,
// and with a point added to the Plugin.
func TestSampleApprovalMatchesPlugin(t *testing.T) {
	s := loadSamples(t)
	if len(s.approvals) == 0 {
		t.Fatal("no Approval sample")
	}
	a := s.approvals[0]
	if a.Spec.Decision != smsv1.DecisionApproved {
		t.Errorf("decision = %q, want Approved", a.Spec.Decision)
	}
	var p *smsv1.Plugin
	for i := range s.plugins {
		if s.plugins[i].Name == a.Spec.PluginRef.Name {
			p = &s.plugins[i]
		}
	}
	if p == nil {
		t.Fatalf("approval %s names plugin %q, which is not a sample", a.Name, a.Spec.PluginRef.Name)
	}
	if a.Spec.PluginID != p.Spec.ID {
		t.Errorf("approval pluginId = %q, want the plugin's id %q", a.Spec.PluginID, p.Spec.ID)
	}
	code, err := s.code(p)
	if err != nil {
		t.Fatalf("plugin %s: %v", p.Name, err)
	}
	if want := adminv1.HashCode([]byte(code)); a.Spec.CodeHash != want {
		t.Errorf("approval codeHash = %s, want %s, the hash of plugin %s's code", a.Spec.CodeHash, want, p.Name)
	}
	m := adminv1.Manifest{ID: p.Spec.ID, Version: p.Spec.Version, Description: p.Spec.Description, Inject: p.Spec.Inject,
		Optional: p.Spec.Optional, Provide: p.Spec.Provide, Scopes: p.Spec.Scopes, Points: p.Spec.Points}
	for point, items := range p.Spec.Contributes {
		if m.Contributes == nil {
			m.Contributes = map[string][]any{}
		}
		m.Contributes[point] = []any{}
		for _, item := range items {
			var v any
			if err := json.Unmarshal(item.Raw, &v); err != nil {
				t.Fatalf("plugin %s: contributes[%s]: %v", p.Name, point, err)
			}
			m.Contributes[point] = append(m.Contributes[point], v)
		}
	}
	want := controllers.DescribeDeclaration(controllers.DeclarationOf(m))
	if a.Spec.Declaration == nil {
		t.Fatalf("approval %s names no declaration, want %s: a pre-approval without one is never applied", a.Name, want)
	}
	if got := controllers.DescribeDeclaration(*a.Spec.Declaration); got != want {
		t.Errorf("approval declaration = %s, want %s, what plugin %s declares", got, want, p.Name)
	}
}
