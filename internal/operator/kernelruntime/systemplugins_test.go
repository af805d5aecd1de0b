package kernelruntime

import (
	"slices"
	"testing"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/baseline"
)

// TestSystemPluginsMatchTheKernel: the names a Tenant may give are exactly
// the kernel's optional system plugins, and the kernel's container is told
// them. Seen failing with meta left out of api/v1.s list.
func TestSystemPluginsMatchTheKernel(t *testing.T) {
	names := SystemPluginNames(smsv1.SystemPlugins)
	if !slices.Equal(names, baseline.Services) {
		t.Fatalf("api/v1 lists %v, the kernel %v", names, baseline.Services)
	}
	tenant := &smsv1.Tenant{Spec: smsv1.TenantSpec{SystemPlugins: []smsv1.SystemPlugin{smsv1.SystemPluginRPC, smsv1.SystemPluginMeta}}}
	tenant.Name, tenant.Namespace = "a", "b"
	cfg, err := k8sConfig(tenant)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cfg.Args(), "--system-plugins=rpc,meta") {
		t.Fatalf("the container's args %q do not turn rpc and meta on", cfg.Args())
	}
}
