package kernelruntime_test

import (
	"context"
	"testing"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
)

// TestKubernetesRotatedSecretRollsThePod: a new model key or admin token
// changes the pod template's checksum annotation, so the StatefulSet
// replaces the pod and the kernel starts with the new value; the same
// values leave the template alone. Seen failing without the annotation:
// the template stayed the same and the running kernel kept the old key.
func TestKubernetesRotatedSecretRollsThePod(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "rotate", func(s *smsv1.TenantSpec) { s.Model = k8sScriptedModel() })
	rt := kernelruntime.NewKubernetes(env.Client, env.Scheme, k8sTestOptions)
	checksum := func(spec kernelruntime.Spec) string {
		t.Helper()
		if _, err := rt.Ensure(context.Background(), spec); err != nil {
			t.Fatalf("Ensure: %v", err)
		}
		sts, _ := k8sObjects(t, tenant)
		return sts.Spec.Template.Annotations[kernelruntime.ChecksumAnnotation]
	}
	spec := k8sSpec(tenant)
	spec.ModelKey = "key-1"
	first := checksum(spec)
	if first == "" || checksum(spec) != first {
		t.Fatalf("checksum %q, then another for the same values", first)
	}
	spec.ModelKey = "key-2"
	rotatedKey := checksum(spec)
	spec.AdminToken = "rotated"
	rotatedToken := checksum(spec)
	if rotatedKey == first || rotatedToken == rotatedKey {
		t.Fatalf("checksums %s, %s, %s: a rotation left the pod template alone", first, rotatedKey, rotatedToken)
	}
}
