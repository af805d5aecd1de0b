package kernelruntime_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
)

// TestKubernetesEnsureUpdatesStatefulSet changes the tenant's spec and
// checks the pod template follows, both ways. Seen failing with the args
// replaced only when not equality.Semantic.DeepDerivative of the old ones
// (turning autoApprove off left "--auto-approve" in the args, a shorter
// list counting as derived) and with the pull policy left to server
// defaulting (the ":latest" image kept "IfNotPresent").
func TestKubernetesEnsureUpdatesStatefulSet(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "upd", nil)
	k8sEnsure(t, tenant)
	before, _ := k8sObjects(t, tenant)
	if f := k8sFlags(t, k8sContainer(t, before).Args); f["tenant"] != tenant.Namespace+"/"+tenant.Name {
		t.Errorf("args = %q, want --tenant %s/%s", k8sContainer(t, before).Args, tenant.Namespace, tenant.Name)
	}

	tenant.Spec.Judge.AutoApprove = true
	tenant.Spec.SafeMode = true
	tenant.Spec.Image = "registry.example/other:latest"
	k8sEnsure(t, tenant)
	after, _ := k8sObjects(t, tenant)
	c := k8sContainer(t, after)
	if after.ResourceVersion == before.ResourceVersion {
		t.Errorf("resourceVersion unchanged after a spec change")
	}
	if f := k8sFlags(t, c.Args); f["auto-approve"] != "true" || f["safe-mode"] != "true" {
		t.Errorf("args = %q, want --auto-approve and --safe-mode", c.Args)
	}
	if c.Image != tenant.Spec.Image || c.ImagePullPolicy != corev1.PullAlways || c.Command != nil {
		t.Errorf("image, pull policy, command = %s, %s, %q; want %s, Always and the image's entrypoint",
			c.Image, c.ImagePullPolicy, c.Command, tenant.Spec.Image)
	}

	tenant.Spec.Judge.AutoApprove = false
	tenant.Spec.SafeMode = false
	tenant.Spec.Image = ""
	k8sEnsure(t, tenant)
	back, _ := k8sObjects(t, tenant)
	if c := k8sContainer(t, back); slices.Contains(c.Args, "--auto-approve") || slices.Contains(c.Args, "--safe-mode") || c.Image != k8sTestImage ||
		c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("args, image, pull policy = %q, %s, %s; want no --auto-approve, %s, IfNotPresent",
			c.Args, c.Image, c.ImagePullPolicy, k8sTestImage)
	}
}

// TestKubernetesKeepsImmutableFields changes what the StatefulSet cannot
// follow. Seen failing with the selector, serviceName and volume claim
// templates set on every Ensure ("StatefulSet.apps "immut-kernel" is
// invalid: spec.volumeClaimTemplates: Invalid value: ...") and with no
// check for a postgres kernel moving to sqlite (the API server refused
// "volumeMounts[2].name: Not found: "data"" instead of ErrStorageChanged).
func TestKubernetesKeepsImmutableFields(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "immut", nil)
	k8sEnsure(t, tenant)
	tenant.Spec.Storage.SQLite = &smsv1.SQLiteStorage{Size: ptr.To(resource.MustParse("5Gi")), StorageClassName: ptr.To("fast")}
	tenant.Spec.Executor = "goja"
	k8sEnsure(t, tenant)
	sts, _ := k8sObjects(t, tenant)
	pvc := sts.Spec.VolumeClaimTemplates[0]
	if size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; size.String() != "1Gi" || pvc.Spec.StorageClassName != nil {
		t.Errorf("claim template = %s class %v, want the original 1Gi <nil>", size.String(), pvc.Spec.StorageClassName)
	}
	if f := k8sFlags(t, k8sContainer(t, sts).Args); f["executor"] != "goja" {
		t.Errorf("executor flag = %q, want goja: the template must still follow the spec", f["executor"])
	}

	pg := k8sTenant(t, "moved", func(s *smsv1.TenantSpec) { s.Storage = k8sPostgres("") })
	k8sEnsure(t, pg)
	pg.Spec.Storage = smsv1.TenantStorage{Driver: smsv1.StorageSQLite}
	rt := kernelruntime.NewKubernetes(env.Client, env.Scheme, k8sTestOptions)
	if _, err := rt.Ensure(context.Background(), k8sSpec(pg)); !errors.Is(err, kernelruntime.ErrStorageChanged) {
		t.Errorf("Ensure after postgres -> sqlite = %v, want ErrStorageChanged", err)
	}
}

// k8sSetReady writes the StatefulSet's status as its controller would.
func k8sSetReady(t *testing.T, tenant *smsv1.Tenant, ready int32) {
	t.Helper()
	sts, _ := k8sObjects(t, tenant)
	sts.Status.Replicas = 1
	sts.Status.ReadyReplicas = ready
	if err := env.Client.Status().Update(context.Background(), sts); err != nil {
		t.Fatalf("update statefulset status: %v", err)
	}
}

// TestKubernetesRunning checks Running follows readyReplicas. Seen failing
// with Running read from status.replicas instead ("status with 0/1 ready
// = {... Running:true ...}").
func TestKubernetesRunning(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "run", nil)
	k8sEnsure(t, tenant)
	k8sSetReady(t, tenant, 0)
	if st := k8sEnsure(t, tenant); st.Running || st.Message != "waiting for the kernel pod to be ready (0/1)" {
		t.Errorf("status with 0/1 ready = %+v, want not Running, waiting", st)
	}
	k8sSetReady(t, tenant, 1)
	if st := k8sEnsure(t, tenant); !st.Running || st.Message != "" {
		t.Errorf("status with 1/1 ready = %+v, want Running and no message", st)
	}
}

// TestKubernetesSuspend scales a ready kernel to zero and back. Seen
// failing with the status ignoring suspend ("status when suspended =
// {... Running:true Message:}") and with replicas always 1 ("replicas
// when suspended = 1").
func TestKubernetesSuspend(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "susp", nil)
	k8sEnsure(t, tenant)
	k8sSetReady(t, tenant, 1)

	tenant.Spec.Suspend = true
	st := k8sEnsure(t, tenant)
	sts, _ := k8sObjects(t, tenant)
	if got := ptr.Deref(sts.Spec.Replicas, -1); got != 0 {
		t.Errorf("replicas when suspended = %d, want 0", got)
	}
	if st.Running || st.Message != "suspended" {
		t.Errorf("status when suspended = %+v, want not Running, suspended", st)
	}

	tenant.Spec.Suspend = false
	if st := k8sEnsure(t, tenant); !st.Running {
		t.Errorf("status when resumed = %+v, want Running", st)
	}
	sts, _ = k8sObjects(t, tenant)
	if got := ptr.Deref(sts.Spec.Replicas, -1); got != 1 {
		t.Errorf("replicas when resumed = %d, want 1", got)
	}
}

// TestKubernetesPostgres checks the URL comes from its Secret through the
// environment and never appears in the StatefulSet. Seen failing with the
// env var left out ("env = []") and with the default schema keeping the
// tenant name's dashes ("tenant_beta-one").
func TestKubernetesPostgres(t *testing.T) {
	testenv.Need(t)
	for _, tc := range []struct{ schema, want string }{{"", "tenant_beta_one"}, {"custom", "custom"}} {
		t.Run(tc.want, func(t *testing.T) {
			tenant := k8sTenant(t, "beta-one", func(s *smsv1.TenantSpec) { s.Storage = k8sPostgres(tc.schema) })
			k8sEnsure(t, tenant)
			sts, _ := k8sObjects(t, tenant)
			c := k8sContainer(t, sts)
			wantEnv := []corev1.EnvVar{{Name: "SMS_POSTGRES_URL", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "pg"}, Key: "url"},
			}}}
			if len(c.Env) != 1 || c.Env[0].Name != wantEnv[0].Name || c.Env[0].ValueFrom == nil ||
				*c.Env[0].ValueFrom.SecretKeyRef != *wantEnv[0].ValueFrom.SecretKeyRef {
				t.Errorf("env = %+v, want %+v", c.Env, wantEnv)
			}
			f := k8sFlags(t, c.Args)
			if f["store"] != "$(SMS_POSTGRES_URL)" || f["schema"] != tc.want {
				t.Errorf("store, schema = %q, %q; want $(SMS_POSTGRES_URL), %s", f["store"], f["schema"], tc.want)
			}
			if len(sts.Spec.VolumeClaimTemplates) != 0 {
				t.Errorf("volumeClaimTemplates = %+v, want none", sts.Spec.VolumeClaimTemplates)
			}
			if m, ok := k8sMounts(c)["/data"]; ok {
				t.Errorf("mount at /data = %+v, want none", m)
			}
		})
	}
}

// TestKubernetesModel checks the model's key and script reach the kernel
// as files. Seen failing with the script's ConfigMap key not projected
// to script.json ("Items:[]KeyToPath{KeyToPath{Key:demo.json,
// Path:demo.json...") and with the key file left out of the config ("flag
// model-key-file = "", ..." and no mount at /var/run/sms/model).
func TestKubernetesModel(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "gamma", func(s *smsv1.TenantSpec) { s.Model = k8sScriptedModel() })
	k8sEnsure(t, tenant)
	sts, _ := k8sObjects(t, tenant)
	c := k8sContainer(t, sts)
	f := k8sFlags(t, c.Args)
	want := map[string]string{
		"model": "scripted", "model-name": "demo", "model-base-url": "http://model.example",
		"model-script": "/etc/sms/model/script.json", "model-key-file": "/var/run/sms/model/key",
	}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("flag %s = %q, want %q", k, f[k], v)
		}
	}
	key := k8sVolume(t, sts, "model-key").Secret
	if key == nil || key.SecretName != "model" || !slices.Equal(key.Items, []corev1.KeyToPath{{Key: "apiKey", Path: "key"}}) {
		t.Errorf("model-key volume = %+v, want secret model key apiKey as key", key)
	}
	script := k8sVolume(t, sts, "model-script").ConfigMap
	if script == nil || script.Name != "script" || !slices.Equal(script.Items, []corev1.KeyToPath{{Key: "demo.json", Path: "script.json"}}) {
		t.Errorf("model-script volume = %+v, want configmap script key demo.json as script.json", script)
	}
	mounts := k8sMounts(c)
	for path, volume := range map[string]string{"/var/run/sms/model": "model-key", "/etc/sms/model": "model-script"} {
		if m := mounts[path]; m.Name != volume || !m.ReadOnly {
			t.Errorf("mount at %s = %+v, want %s read-only", path, m, volume)
		}
	}

	noScript := k8sTenant(t, "delta", func(s *smsv1.TenantSpec) {
		s.Model = &smsv1.TenantModel{Provider: "scripted"}
	})
	rt := kernelruntime.NewKubernetes(env.Client, env.Scheme, k8sTestOptions)
	if _, err := rt.Ensure(context.Background(), k8sSpec(noScript)); err == nil || !strings.Contains(err.Error(), "scriptConfigMapRef") {
		t.Errorf("Ensure of a scripted model without a script = %v, want an error naming scriptConfigMapRef", err)
	}
}

// TestKubernetesUsers checks spec.users reaches the kernel: users on, no
// session approving, and the bootstrap Secret mounted as the directory
// --bootstrap-admin-file reads. Seen failing with the volume left out
// (no volume bootstrap-admin) and with --no-session-approve not set.
func TestKubernetesUsers(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "users", func(s *smsv1.TenantSpec) {
		s.Users = &smsv1.TenantUsers{BootstrapAdminSecretRef: &corev1.LocalObjectReference{Name: "first-admin"}}
	})
	k8sEnsure(t, tenant)
	sts, _ := k8sObjects(t, tenant)
	c := k8sContainer(t, sts)
	f := k8sFlags(t, c.Args)
	for k, v := range map[string]string{"users": "true", "no-session-approve": "true", "bootstrap-admin-file": "/var/run/sms/bootstrap-admin"} {
		if f[k] != v {
			t.Errorf("flag %s = %q, want %q", k, f[k], v)
		}
	}
	vol := k8sVolume(t, sts, "bootstrap-admin").Secret
	if vol == nil || vol.SecretName != "first-admin" ||
		!slices.Equal(vol.Items, []corev1.KeyToPath{{Key: "login", Path: "login"}, {Key: "password", Path: "password"}}) {
		t.Errorf("bootstrap-admin volume = %+v, want secret first-admin keys login and password", vol)
	}
	if m := k8sMounts(c)["/var/run/sms/bootstrap-admin"]; m.Name != "bootstrap-admin" || !m.ReadOnly {
		t.Errorf("mount at /var/run/sms/bootstrap-admin = %+v, want bootstrap-admin read-only", m)
	}
}
