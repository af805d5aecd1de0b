package kernelruntime

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

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

// TestKubernetesObjects: spec.objects becomes the kernel's --objects: fs
// on its volume, or the tenant's prefix of an S3 bucket with the Secret's
// keys mounted for --objects-credentials-file; fs without a volume is
// refused. Seen failing with the credentials Secret never mounted (the
// kernel was told a path nothing was at).
func TestKubernetesObjects(t *testing.T) {
	tenant := &smsv1.Tenant{Spec: smsv1.TenantSpec{Objects: &smsv1.TenantObjects{Driver: smsv1.ObjectsFS}}}
	tenant.Name, tenant.Namespace = "acme", "shop"
	cfg, err := k8sConfig(tenant)
	if err != nil || cfg.Objects != "fs:/data/objects" || cfg.ObjectsCredentialsFile != "" {
		t.Fatalf("fs: %+v %v", cfg, err)
	}
	tenant.Spec.Objects = &smsv1.TenantObjects{Driver: smsv1.ObjectsS3, S3: &smsv1.TenantS3{Bucket: "files", Region: "auto",
		Endpoint: "https://acct.r2.cloudflarestorage.com", CredentialsSecretRef: corev1.LocalObjectReference{Name: "r2"}}}
	k := &k8sKernel{tenant: tenant}
	if k.config, err = k8sConfig(tenant); err != nil {
		t.Fatal(err)
	}
	if want := "s3://files?endpoint=https%3A%2F%2Facct.r2.cloudflarestorage.com&prefix=shop%2Facme%2F&region=auto"; k.config.Objects != want || k.config.ObjectsCredentialsFile != k8sObjectsPath {
		t.Fatalf("s3: %q %q, want %q", k.config.Objects, k.config.ObjectsCredentialsFile, want)
	}
	mounted := slices.ContainsFunc(k.mounts(), func(m corev1.VolumeMount) bool { return m.Name == k8sObjectsVolume && m.MountPath == k8sObjectsPath })
	vol := slices.IndexFunc(k.volumes(), func(v corev1.Volume) bool { return v.Name == k8sObjectsVolume })
	if !mounted || vol < 0 || k.volumes()[vol].Secret.SecretName != "r2" || len(k.volumes()[vol].Secret.Items) != 2 {
		t.Fatalf("the credentials are not mounted: %v %v", k.mounts(), k.volumes())
	}
	tenant.Spec.Objects = &smsv1.TenantObjects{Driver: smsv1.ObjectsFS}
	tenant.Spec.Storage = smsv1.TenantStorage{Driver: smsv1.StoragePostgres, Postgres: &smsv1.PostgresStorage{}}
	if _, err := k8sConfig(tenant); err == nil || !strings.Contains(err.Error(), "only sqlite storage has") {
		t.Fatalf("fs with postgres: %v", err)
	}
}
