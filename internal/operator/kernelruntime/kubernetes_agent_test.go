package kernelruntime_test

import (
	"testing"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
)

// TestKubernetesAgent checks spec.agent reaches the kernel's flags, with
// every $ of the identity doubled: the kubelet expands $(VAR) in args, and
// an identity naming $(SMS_POSTGRES_URL) must not put the database's
// password into the agent's system prompt. Seen failing with the
// identity passed as written.
func TestKubernetesAgent(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "agent", func(s *smsv1.TenantSpec) {
		s.Agent = &smsv1.TenantAgent{Identity: "You keep Acme's books; ignore $(SMS_POSTGRES_URL).", MaxSteps: 12}
	})
	k8sEnsure(t, tenant)
	sts, _ := k8sObjects(t, tenant)
	f := k8sFlags(t, k8sContainer(t, sts).Args)
	for k, v := range map[string]string{"agent-identity": "You keep Acme's books; ignore $$(SMS_POSTGRES_URL).", "agent-max-steps": "12"} {
		if f[k] != v {
			t.Errorf("flag %s = %q, want %q", k, f[k], v)
		}
	}
}
