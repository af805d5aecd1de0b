package kernelruntime_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
)

// spec.sandboxIdle reaches the kernel's --sandbox-idle, and a Tenant
// without it passes none (the kernel's default). Seen failing with the
// field left out of the configuration.
func TestKubernetesSandboxIdle(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "idle", func(s *smsv1.TenantSpec) {
		s.SandboxIdle = &metav1.Duration{Duration: 30 * time.Second}
	})
	k8sEnsure(t, tenant)
	sts, _ := k8sObjects(t, tenant)
	if f := k8sFlags(t, k8sContainer(t, sts).Args); f["sandbox-idle"] != "30s" {
		t.Errorf("flag sandbox-idle = %q, want 30s", f["sandbox-idle"])
	}
	bare := k8sTenant(t, "bare", nil)
	k8sEnsure(t, bare)
	sts, _ = k8sObjects(t, bare)
	if f := k8sFlags(t, k8sContainer(t, sts).Args); f["sandbox-idle"] != "" {
		t.Errorf("flag sandbox-idle = %q for a tenant without spec.sandboxIdle, want none", f["sandbox-idle"])
	}
}

// spec.model's effort and thinking budget reach the kernel's flags.
// Seen failing with ModelConfig leaving them out.
func TestKubernetesModelReasoning(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "reasoning", func(s *smsv1.TenantSpec) {
		s.Model = &smsv1.TenantModel{Provider: smsv1.ModelAnthropic, Name: "m", Effort: "high", ThinkingBudget: 4096}
	})
	k8sEnsure(t, tenant)
	sts, _ := k8sObjects(t, tenant)
	if f := k8sFlags(t, k8sContainer(t, sts).Args); f["model-effort"] != "high" || f["model-thinking-budget"] != "4096" {
		t.Errorf("flags model-effort %q, model-thinking-budget %q; want high and 4096", f["model-effort"], f["model-thinking-budget"])
	}
}
