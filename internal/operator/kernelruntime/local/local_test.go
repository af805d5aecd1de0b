package local

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/kernelcmd"
)

// A tenant whose spec names no model gets the runtime's default model
// (manager dev's scripted demo); one that names a model keeps its own.
// Seen failing with the DefaultModel case removed (no model at all).
func TestLocalDefaultModel(t *testing.T) {
	demo := kernelcmd.Model{Provider: "scripted", Script: "/demo.json"}
	l := New(Options{Dir: t.TempDir(), DefaultModel: demo})
	bare := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	cfg, err := l.config(t.TempDir(), kernelruntime.Spec{Tenant: bare})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != demo {
		t.Errorf("model of a tenant without one = %+v, want %+v", cfg.Model, demo)
	}
	own := bare.DeepCopy()
	own.Spec.Model = &smsv1.TenantModel{Provider: "openaicompat", Name: "llama", BaseURL: "http://127.0.0.1:1/v1"}
	cfg, err = l.config(t.TempDir(), kernelruntime.Spec{Tenant: own})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model.Provider != "openaicompat" || cfg.Model.Name != "llama" || cfg.Model.Script != "" {
		t.Errorf("model of a tenant naming one = %+v, want its own", cfg.Model)
	}
}

// A tenant with spec.users runs its kernel with users on, sessions that
// cannot approve (only the operator approves), and the bootstrap admin
// written to a file only the kernel's user reads. Seen failing with the
// spec.users case removed from config.
func TestLocalUsers(t *testing.T) {
	l := New(Options{Dir: t.TempDir()})
	ten := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	cfg, err := l.config(t.TempDir(), kernelruntime.Spec{Tenant: ten})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Users || cfg.BootstrapAdminFile != "" {
		t.Errorf("a tenant without spec.users: users %v, bootstrap file %q", cfg.Users, cfg.BootstrapAdminFile)
	}
	ten.Spec.Users = &smsv1.TenantUsers{}
	boot := []byte("ada\nsecret-password\n")
	cfg, err = l.config(t.TempDir(), kernelruntime.Spec{Tenant: ten, BootstrapAdmin: boot})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Users || !cfg.NoSessionApprove {
		t.Errorf("a tenant with spec.users: users %v, no session approve %v; want both", cfg.Users, cfg.NoSessionApprove)
	}
	fi, err := os.Stat(cfg.BootstrapAdminFile)
	if err != nil {
		t.Fatalf("bootstrap file: %v", err)
	}
	if got, _ := os.ReadFile(cfg.BootstrapAdminFile); string(got) != string(boot) || fi.Mode().Perm() != 0o600 {
		t.Errorf("bootstrap file %s holds %q with mode %v; want %q with 0600", cfg.BootstrapAdminFile, got, fi.Mode().Perm(), boot)
	}
}

// A tenant's spec.agent reaches its kernel's settings. Seen failing with
// the spec.agent case removed from config.
func TestLocalAgent(t *testing.T) {
	l := New(Options{Dir: t.TempDir()})
	ten := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"},
		Spec: smsv1.TenantSpec{Agent: &smsv1.TenantAgent{Identity: "You keep $(the) books.", MaxSteps: 5},
			SystemPlugins: []smsv1.SystemPlugin{smsv1.SystemPluginAudit}}}
	cfg, err := l.config(t.TempDir(), kernelruntime.Spec{Tenant: ten})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.SystemPlugins) != 1 || cfg.SystemPlugins[0] != "audit" {
		t.Errorf("system plugins = %v, want [audit]", cfg.SystemPlugins)
	}
	if want := (kernelcmd.Agent{Identity: "You keep $(the) books.", MaxSteps: 5}); cfg.Agent != want {
		t.Errorf("agent = %+v, want %+v (no kubelet here: the identity as written)", cfg.Agent, want)
	}
}

// TestLocalObjects: the local runtime gives a kernel files under its data
// directory, or its S3 bucket with the credentials the operator read.
// Seen failing with the credentials left unwritten (no
// --objects-credentials-file).
func TestLocalObjects(t *testing.T) {
	l := New(Options{Dir: t.TempDir()})
	ten := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"},
		Spec: smsv1.TenantSpec{Objects: &smsv1.TenantObjects{Driver: smsv1.ObjectsFS}}}
	dir := t.TempDir()
	cfg, err := l.config(dir, kernelruntime.Spec{Tenant: ten})
	if err != nil || cfg.Objects != "fs:"+filepath.Join(dir, "objects") {
		t.Fatalf("fs: %q %v", cfg.Objects, err)
	}
	ten.Spec.Objects = &smsv1.TenantObjects{Driver: smsv1.ObjectsS3, S3: &smsv1.TenantS3{Bucket: "files", CredentialsSecretRef: corev1.LocalObjectReference{Name: "s"}}}
	cfg, err = l.config(dir, kernelruntime.Spec{Tenant: ten, ObjectsCredentials: []byte("AK\nSK\n")})
	if err != nil || cfg.Objects != "s3://files?prefix=ns%2Fa%2F" {
		t.Fatalf("s3: %q %v", cfg.Objects, err)
	}
	if raw, err := os.ReadFile(cfg.ObjectsCredentialsFile); err != nil || string(raw) != "AK\nSK\n" {
		t.Fatalf("credentials file %q: %q %v", cfg.ObjectsCredentialsFile, raw, err)
	}
}

// Every kernel gets the runtime's system plugins on top of its tenant's
// (manager dev's console), once each, and names its Tenant. Seen failing
// with Options.SystemPlugins not read by config.
func TestLocalSystemPlugins(t *testing.T) {
	l := New(Options{Dir: t.TempDir(), SystemPlugins: []string{"console"}})
	ten := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	ten.Spec.SystemPlugins = []smsv1.SystemPlugin{smsv1.SystemPluginRPC, smsv1.SystemPluginConsole}
	cfg, err := l.config(t.TempDir(), kernelruntime.Spec{Tenant: ten})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.SystemPlugins, []string{"rpc", "console"}) || cfg.Tenant != "ns/a" {
		t.Errorf("system plugins %q, tenant %q; want [rpc console], ns/a", cfg.SystemPlugins, cfg.Tenant)
	}
	ten.Spec.SystemPlugins = nil
	if cfg, _ = l.config(t.TempDir(), kernelruntime.Spec{Tenant: ten}); !slices.Equal(cfg.SystemPlugins, []string{"console"}) {
		t.Errorf("system plugins of a tenant naming none: %q, want [console]", cfg.SystemPlugins)
	}
}

// Resolving an unchanged tenant again writes none of its files (every
// reconcile resolves it), and a changed secret is written. Seen failing
// (the file written again) with config writing every file each time.
func TestLocalConfigWritesOnlyChanges(t *testing.T) {
	l := New(Options{Dir: t.TempDir()})
	dir := t.TempDir()
	tenant := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	spec := kernelruntime.Spec{Tenant: tenant, AdminToken: "first"}
	cfg, err := l.config(dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1, 0)
	if err := os.Chtimes(cfg.TokenFile, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := l.config(dir, spec); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(cfg.TokenFile); err != nil || !fi.ModTime().Equal(old) {
		t.Fatalf("the unchanged token file was written again (%v, %v)", fi.ModTime(), err)
	}
	spec.AdminToken = "second"
	if _, err := l.config(dir, spec); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(cfg.TokenFile); err != nil || string(raw) != "second" {
		t.Fatalf("token file after a change = %q, %v; want second", raw, err)
	}
}

// spec.sandboxIdle reaches the local kernel's configuration. Seen failing
// with the field left out of config.
func TestLocalSandboxIdle(t *testing.T) {
	l := New(Options{Dir: t.TempDir()})
	tenant := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"},
		Spec: smsv1.TenantSpec{SandboxIdle: &metav1.Duration{Duration: -time.Second}}}
	cfg, err := l.config(t.TempDir(), kernelruntime.Spec{Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SandboxIdle != -time.Second {
		t.Errorf("SandboxIdle = %s, want -1s", cfg.SandboxIdle)
	}
}

// spec.model's effort and thinking budget reach the local kernel's
// configuration, beside the key file the runtime places. Seen failing
// with ModelConfig leaving them out.
func TestLocalModelReasoning(t *testing.T) {
	l := New(Options{Dir: t.TempDir()})
	tenant := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"},
		Spec: smsv1.TenantSpec{Model: &smsv1.TenantModel{Provider: smsv1.ModelAnthropic, Name: "m", Effort: "max", ThinkingBudget: 2048}}}
	cfg, err := l.config(t.TempDir(), kernelruntime.Spec{Tenant: tenant, ModelKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model.Effort != "max" || cfg.Model.ThinkingBudget != 2048 || cfg.Model.KeyFile == "" {
		t.Errorf("Model = %+v, want effort max, budget 2048 and a key file", cfg.Model)
	}
}
