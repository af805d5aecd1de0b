package kernelcmd

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// The drivers the command links are exactly the values the Tenant API
// accepts, in the same order: its constants, and the enums of the CRD the
// API server validates with (generated from the kubebuilder markers). So
// adding a provider means a driver package, its line in drivers.go and its
// enum value (none for a single-user driver, which Tenants never name),
// and forgetting one fails here. Seen failing with
// openaicompat left out of Models, and with isolated and goja swapped.
func TestDriversMatchTheAPI(t *testing.T) {
	spec := tenantSpecSchema(t)
	cases := []struct {
		name      string
		got       []string
		constants []string
		enum      apiextensionsv1.JSONSchemaProps
	}{
		{"models", TenantModels(), strs(smsv1.ModelProviders), spec.Properties["model"].Properties["provider"]},
		{"executors", Executors.Names(), strs(smsv1.Executors), spec.Properties["executor"]},
		{"stores", Stores.Names(), strs([]smsv1.StorageDriver{smsv1.StorageSQLite, smsv1.StoragePostgres}), spec.Properties["storage"].Properties["driver"]},
	}
	for _, tc := range cases {
		var enum []string
		for _, v := range tc.enum.Enum {
			enum = append(enum, strings.Trim(string(v.Raw), `"`))
		}
		if !slices.Equal(tc.got, tc.constants) || !slices.Equal(tc.got, enum) {
			t.Errorf("%s: registered %q, api/v1 constants %q, CRD enum %q; want all three equal", tc.name, tc.got, tc.constants, enum)
		}
	}
	if Defaults.Executor != string(smsv1.ExecutorIsolated) || Executors.Names()[0] != Defaults.Executor {
		t.Errorf("default executor %q, want %q, the first of Executors", Defaults.Executor, smsv1.ExecutorIsolated)
	}
}

// tenantSpecSchema is the generated Tenant CRD's schema of spec.
func tenantSpecSchema(t *testing.T) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	raw, err := os.ReadFile("../config/crd/bases/sms.dev_tenants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
}

// The Tenant's rules on spec.model name each provider's efforts, and the
// providers that take a thinking budget, exactly as the drivers do, so
// the API server refuses what the kernel would. Seen failing with
// "max" taken out of the anthropic driver's Efforts only.
func TestModelRulesMatchTheDrivers(t *testing.T) {
	var rules strings.Builder
	for _, r := range tenantSpecSchema(t).Properties["model"].XValidations {
		rules.WriteString(r.Rule + "\n")
	}
	var budget []string
	for _, d := range Models.All() {
		if !slices.Contains(smsv1.ModelProviders, smsv1.ModelProvider(d.Name)) {
			continue
		}
		quoted := make([]string, len(d.Efforts))
		for i, e := range d.Efforts {
			quoted[i] = "'" + e + "'"
		}
		clause := "(self.provider == '" + d.Name + "' && self.effort in [" + strings.Join(quoted, ", ") + "])"
		mentioned := strings.Contains(rules.String(), "self.provider == '"+d.Name+"' && self.effort")
		if len(d.Efforts) > 0 && !strings.Contains(rules.String(), clause) || len(d.Efforts) == 0 && mentioned {
			t.Errorf("the Tenant's effort rule for %s does not read %s:\n%s", d.Name, clause, rules.String())
		}
		if d.ThinkingBudget {
			budget = append(budget, "'"+d.Name+"'")
		}
	}
	if want := "self.provider in [" + strings.Join(budget, ", ") + "]"; !strings.Contains(rules.String(), want) {
		t.Errorf("the Tenant's thinking budget rule does not read %s:\n%s", want, rules.String())
	}
}

func strs[S ~string](values []S) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// The flags' help names every registered driver with its own help text,
// and every variable a model key is read from. Seen failing with the
// --model usage written out by hand without openaicompat.
func TestFlagHelpComesFromTheDrivers(t *testing.T) {
	fs := pflag.NewFlagSet("kernel", pflag.ContinueOnError)
	BindFlags(fs, &Config{})
	usage := func(name string) string { return fs.Lookup(name).Usage }
	for _, d := range Models.All() {
		if want := d.Name + " (" + d.Help + ")"; !strings.Contains(usage("model"), want) {
			t.Errorf("--model usage %q lacks %q", usage("model"), want)
		}
		for _, env := range d.KeyEnv {
			if !strings.Contains(usage("model-key-file"), env) {
				t.Errorf("--model-key-file usage %q lacks %s", usage("model-key-file"), env)
			}
		}
	}
	if got, want := usage("executor"), "where agent code runs: "+Executors.Help(); got != want {
		t.Errorf("--executor usage = %q, want %q", got, want)
	}
	if got, want := usage("store"), "sqlite:PATH or a postgres:// URL"; got != want {
		t.Errorf("--store usage = %q, want %q", got, want)
	}
	if got := usage("model-base-url"); !strings.Contains(got, "required for openaicompat") {
		t.Errorf("--model-base-url usage = %q, want it to name openaicompat", got)
	}
}

// TestDefaultExecutorIsRegistered: kernelconfig spells the default executor
// without linking it, so the name must stay one the registry knows.
// Renaming it in kernelconfig.Defaults fails here.
func TestDefaultExecutorIsRegistered(t *testing.T) {
	if _, err := Executors.Lookup(Defaults.Executor); err != nil {
		t.Fatalf("Defaults.Executor %q: %v", Defaults.Executor, err)
	}
}

// The operator recognizes an application user's requests by the prefix
// the kernel's http plugin gives their principals; both spell it once.
func TestUserPrefixMatchesTheAPI(t *testing.T) {
	if smsv1.AppUserPrefix != smshttp.UserPrefix {
		t.Fatalf("api/v1 AppUserPrefix %q, plugins/http UserPrefix %q", smsv1.AppUserPrefix, smshttp.UserPrefix)
	}
}
