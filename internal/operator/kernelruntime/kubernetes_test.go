package kernelruntime_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/kernelcmd/kernelconfig"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}, &env) }

const k8sTestImage = "registry.example/sms/manager:v1.2.3"

// k8sTestCommand is the command the runtime gives kernel pods of its own
// image.
const k8sTestCommand = "/sms-kernel"

// k8sTestOptions are the options of every runtime the tests make.
var k8sTestOptions = kernelruntime.KubernetesOptions{Image: k8sTestImage, Command: []string{k8sTestCommand}, OperatorNamespace: "sms-system"}

// k8sTenant creates a Tenant named name in a namespace of its own, with
// spec changed by edit, and returns it as the API server stored it.
func k8sTenant(t *testing.T, name string, edit func(*smsv1.TenantSpec)) *smsv1.Tenant {
	t.Helper()
	testenv.Need(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kernelruntime-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	tenant := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name}}
	if edit != nil {
		edit(&tenant.Spec)
	}
	if err := env.Client.Create(ctx, tenant); err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	return tenant
}

func k8sSpec(tenant *smsv1.Tenant) kernelruntime.Spec {
	return kernelruntime.Spec{Tenant: tenant, AdminTokenSecret: tenant.Name + "-admin", AdminToken: "s3cret", ChatTokenSecret: tenant.Name + "-chat"}
}

func k8sEnsure(t *testing.T, tenant *smsv1.Tenant) kernelruntime.Status {
	t.Helper()
	rt := kernelruntime.NewKubernetes(env.Client, env.Scheme, k8sTestOptions)
	st, err := rt.Ensure(context.Background(), k8sSpec(tenant))
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return st
}

func k8sObjects(t *testing.T, tenant *smsv1.Tenant) (*appsv1.StatefulSet, *corev1.Service) {
	t.Helper()
	key := types.NamespacedName{Namespace: tenant.Namespace, Name: tenant.Name + "-kernel"}
	sts, svc := &appsv1.StatefulSet{}, &corev1.Service{}
	if err := env.Client.Get(context.Background(), key, sts); err != nil {
		t.Fatalf("get statefulset: %v", err)
	}
	if err := env.Client.Get(context.Background(), key, svc); err != nil {
		t.Fatalf("get service: %v", err)
	}
	return sts, svc
}

func k8sContainer(t *testing.T, sts *appsv1.StatefulSet) corev1.Container {
	t.Helper()
	cs := sts.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != "kernel" {
		t.Fatalf("containers = %+v, want one named kernel", cs)
	}
	return cs[0]
}

// k8sFlags parses `manager kernel` arguments back: --flag=value, or
// --flag alone for true.
func k8sFlags(t *testing.T, args []string) map[string]string {
	t.Helper()
	if len(args) == 0 || args[0] != "kernel" {
		t.Fatalf("args = %q, want them to start with kernel", args)
	}
	flags := map[string]string{}
	for _, a := range args[1:] {
		name, value, found := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !found {
			value = "true"
		}
		flags[name] = value
	}
	return flags
}

func k8sMounts(c corev1.Container) map[string]corev1.VolumeMount {
	out := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		out[m.MountPath] = m
	}
	return out
}

func k8sVolume(t *testing.T, sts *appsv1.StatefulSet, name string) corev1.Volume {
	t.Helper()
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %s in %+v", name, sts.Spec.Template.Spec.Volumes)
	return corev1.Volume{}
}

func k8sAssertOwned(t *testing.T, obj client.Object, tenant *smsv1.Tenant) {
	t.Helper()
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.UID != tenant.UID || ref.Kind != "Tenant" || ref.APIVersion != smsv1.GroupVersion.String() {
		t.Errorf("%T controller = %+v, want Tenant %s (uid %s)", obj, ref, tenant.Name, tenant.UID)
	}
	want := map[string]string{
		"app.kubernetes.io/name": "sms-kernel", "app.kubernetes.io/instance": tenant.Name, smsv1.LabelTenant: tenant.Name,
	}
	for k, v := range want {
		if got := obj.GetLabels()[k]; got != v {
			t.Errorf("%T label %s = %q, want %q", obj, k, got, v)
		}
	}
}

// TestKubernetesDefaultSQLite checks the objects of a tenant with an empty
// spec. Seen failing with the controller reference left off the
// StatefulSet ("*v1.StatefulSet controller = nil") and with the
// container's Command set to the manager ("command ... ["/manager"]"),
// and with the runtime's Command left off its own image's pods.
func TestKubernetesDefaultSQLite(t *testing.T) {
	testenv.Need(t)
	tenant := k8sTenant(t, "alpha", nil)
	st := k8sEnsure(t, tenant)
	wantStatus := kernelruntime.Status{
		Endpoint:      "http://alpha-kernel." + tenant.Namespace + ".svc:8787",
		AdminEndpoint: "http://alpha-kernel." + tenant.Namespace + ".svc:8788",
		Message:       "waiting for the kernel pod to be ready (0/1)",
	}
	if st != wantStatus {
		t.Errorf("status = %+v, want %+v", st, wantStatus)
	}
	sts, svc := k8sObjects(t, tenant)
	k8sAssertOwned(t, sts, tenant)
	k8sAssertOwned(t, svc, tenant)

	selector := map[string]string{
		"app.kubernetes.io/name": "sms-kernel", "app.kubernetes.io/instance": "alpha", smsv1.LabelTenant: "alpha",
	}
	wantPorts := []corev1.ServicePort{
		{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8787, TargetPort: intstr.FromString("http")},
		{Name: "admin", Protocol: corev1.ProtocolTCP, Port: 8788, TargetPort: intstr.FromString("admin")},
	}
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.ClusterIP == corev1.ClusterIPNone ||
		!slices.Equal(svc.Spec.Ports, wantPorts) {
		t.Errorf("service spec = %+v, want ClusterIP with ports %+v", svc.Spec, wantPorts)
	}
	k8sCheckNetworkPolicy(t, tenant, selector)
	if !k8sSameLabels(svc.Spec.Selector, selector) {
		t.Errorf("service selector = %v, want %v", svc.Spec.Selector, selector)
	}
	k8sCheckStatefulSetShape(t, sts, selector)
	k8sCheckDefaultContainer(t, tenant, sts)

	// Remove leaves deletion to the garbage collector, which envtest does
	// not run: the objects stay, owned by the tenant.
	rt := kernelruntime.NewKubernetes(env.Client, env.Scheme, k8sTestOptions)
	if err := rt.Remove(context.Background(), client.ObjectKeyFromObject(tenant)); err != nil {
		t.Errorf("Remove: %v", err)
	}
}

// k8sCheckNetworkPolicy checks the kernel's NetworkPolicy: the
// application port open to all, the admin port to the operator's pods in
// the operator's namespace only.
func k8sCheckNetworkPolicy(t *testing.T, tenant *smsv1.Tenant, selector map[string]string) {
	t.Helper()
	var np networkingv1.NetworkPolicy
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: tenant.Namespace, Name: "alpha-kernel"}, &np); err != nil {
		t.Fatalf("get networkpolicy: %v", err)
	}
	k8sAssertOwned(t, &np, tenant)
	in := np.Spec.Ingress
	if !k8sSameLabels(np.Spec.PodSelector.MatchLabels, selector) || len(in) != 2 ||
		len(in[0].From) != 0 || len(in[0].Ports) != 1 || in[0].Ports[0].Port.IntValue() != 8787 ||
		len(in[1].Ports) != 1 || in[1].Ports[0].Port.IntValue() != 8788 || len(in[1].From) != 1 {
		t.Fatalf("networkpolicy = %+v, want 8787 open and 8788 from the operator only", np.Spec)
	}
	from := in[1].From[0]
	if from.PodSelector == nil || from.PodSelector.MatchLabels["control-plane"] != "controller-manager" ||
		from.NamespaceSelector == nil || from.NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "sms-system" {
		t.Fatalf("admin port peer = %+v, want the operator's pods in sms-system", from)
	}
}

func k8sSameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func k8sCheckStatefulSetShape(t *testing.T, sts *appsv1.StatefulSet, selector map[string]string) {
	t.Helper()
	s := sts.Spec
	if s.Replicas == nil || *s.Replicas != 1 || s.ServiceName != "alpha-kernel" {
		t.Errorf("replicas, serviceName = %v, %q; want 1, alpha-kernel", s.Replicas, s.ServiceName)
	}
	if s.Selector == nil || !k8sSameLabels(s.Selector.MatchLabels, selector) || !k8sSameLabels(s.Template.Labels, selector) {
		t.Errorf("selector = %+v, template labels = %v; want %v", s.Selector, s.Template.Labels, selector)
	}
	retain := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if p := s.PersistentVolumeClaimRetentionPolicy; p == nil || p.WhenDeleted != retain || p.WhenScaled != retain {
		t.Errorf("claim retention = %+v, want Retain, Retain", p)
	}
	if len(s.VolumeClaimTemplates) != 1 {
		t.Fatalf("volumeClaimTemplates = %+v, want one", s.VolumeClaimTemplates)
	}
	pvc := s.VolumeClaimTemplates[0]
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if pvc.Name != "data" || size.String() != "1Gi" || pvc.Spec.StorageClassName != nil ||
		!slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
		t.Errorf("claim template = %s %s class %v modes %v; want data 1Gi <nil> [ReadWriteOnce]",
			pvc.Name, size.String(), pvc.Spec.StorageClassName, pvc.Spec.AccessModes)
	}
	pod := s.Template.Spec
	if sc := pod.SecurityContext; sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.RunAsUser, 0) != 65532 ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context = %+v, want non-root 65532 with RuntimeDefault seccomp", sc)
	}
	if got := k8sVolume(t, sts, "tmp"); got.EmptyDir == nil {
		t.Errorf("tmp volume = %+v, want an emptyDir", got)
	}
	admin := k8sVolume(t, sts, "admin-token").Secret
	if admin == nil || admin.SecretName != "alpha-admin" ||
		!slices.Equal(admin.Items, []corev1.KeyToPath{{Key: "token", Path: "token"}}) {
		t.Errorf("admin-token volume = %+v, want secret alpha-admin key token as token", admin)
	}
}

func k8sCheckDefaultContainer(t *testing.T, tenant *smsv1.Tenant, sts *appsv1.StatefulSet) {
	t.Helper()
	c := k8sContainer(t, sts)
	want := kernelconfig.Config{
		Listen: "0.0.0.0:8787", AdminListen: "0.0.0.0:8788", Store: "sqlite:/data/kernel.db", Name: tenant.Namespace + "/alpha", Tenant: tenant.Namespace + "/alpha",
		TokenFile: "/var/run/sms/admin/token", TokenAuthFile: "/var/run/sms/chat/tokens.csv", Executor: "isolated",
	}.Args()
	if c.Image != k8sTestImage || !slices.Equal(c.Command, []string{k8sTestCommand}) || !slices.Equal(c.Args, want) {
		t.Errorf("image, command, args = %s, %q, %q; want %s, [%s], %q", c.Image, c.Command, c.Args, k8sTestImage, k8sTestCommand, want)
	}
	if f := k8sFlags(t, c.Args); f["store"] != "sqlite:/data/kernel.db" || f["admin-token-file"] != "/var/run/sms/admin/token" {
		t.Errorf("flags = %v, want store sqlite:/data/kernel.db and the admin token file", f)
	}
	mounts := k8sMounts(c)
	wantMounts := []corev1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "admin-token", MountPath: "/var/run/sms/admin", ReadOnly: true},
		{Name: "chat-tokens", MountPath: "/var/run/sms/chat", ReadOnly: true},
		{Name: "tmp", MountPath: "/tmp"},
	}
	for _, m := range wantMounts {
		if got := mounts[m.MountPath]; !equality.Semantic.DeepEqual(got, m) {
			t.Errorf("mount at %s = %+v, want %+v", m.MountPath, got, m)
		}
	}
	for probe, path := range map[*corev1.Probe]string{c.ReadinessProbe: "/readyz", c.LivenessProbe: "/healthz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != path || probe.HTTPGet.Port != intstr.FromString("http") {
			t.Errorf("probe = %+v, want GET %s on http", probe, path)
		}
	}
	sc := c.SecurityContext
	if sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.RunAsUser, 0) != 65532 ||
		ptr.Deref(sc.AllowPrivilegeEscalation, true) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("container security context = %+v, want the restricted profile with a read-only root", sc)
	}
}

// TestKubernetesEnsureIsIdempotent runs Ensure twice and checks that the
// second call sent no write and changed no resourceVersion. Seen failing
// ("second Ensure wrote [update *v1.StatefulSet]") with the secret
// volumes' defaultMode left unset, with the probes' timing left to the
// server, and with the kernel container rebuilt from scratch instead of
// mutated in place (terminationMessagePath, ... dropped); and ("wrote
// [update *v1.Service]") with the service port's protocol left unset. In
// all four the server defaulted the update back to the stored object and
// kept the resourceVersion, which is why the writes are counted.
func TestKubernetesEnsureIsIdempotent(t *testing.T) {
	testenv.Need(t)
	for _, tc := range []struct {
		name string
		edit func(*smsv1.TenantSpec)
	}{
		{"default", nil},
		{"sqlite with resources", func(s *smsv1.TenantSpec) {
			s.Storage.SQLite = &smsv1.SQLiteStorage{Size: ptr.To(resource.MustParse("2048Mi")), StorageClassName: ptr.To("fast")}
			s.Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.1")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			}
		}},
		{"postgres and model", func(s *smsv1.TenantSpec) {
			s.Storage = k8sPostgres("")
			s.Model = k8sScriptedModel()
			s.Judge = smsv1.TenantJudge{AutoApprove: true, SensitivePoints: []string{"routes"}, SensitiveScopes: []string{"net"}}
			s.Image = "registry.example/sms/manager:latest"
			s.Suspend = true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tenant := k8sTenant(t, "idem", tc.edit)
			k8sEnsure(t, tenant)
			sts1, svc1 := k8sObjects(t, tenant)
			rt, writes := k8sWriteCounter(t)
			if _, err := rt.Ensure(context.Background(), k8sSpec(tenant)); err != nil {
				t.Fatalf("second Ensure: %v", err)
			}
			if len(*writes) != 0 {
				t.Errorf("second Ensure wrote %v, want no writes", *writes)
			}
			sts2, svc2 := k8sObjects(t, tenant)
			if sts1.ResourceVersion != sts2.ResourceVersion {
				t.Errorf("statefulset resourceVersion %s -> %s, want unchanged; spec %+v -> %+v",
					sts1.ResourceVersion, sts2.ResourceVersion, sts1.Spec, sts2.Spec)
			}
			if svc1.ResourceVersion != svc2.ResourceVersion {
				t.Errorf("service resourceVersion %s -> %s, want unchanged; spec %+v -> %+v",
					svc1.ResourceVersion, svc2.ResourceVersion, svc1.Spec, svc2.Spec)
			}
		})
	}
}

// k8sWriteCounter returns a runtime whose client records the writes it
// sends. The API server skips storing an update that its defaulting turns
// back into the stored object, so an unchanged resourceVersion alone does
// not show that no write was sent.
func k8sWriteCounter(t *testing.T) (*kernelruntime.Kubernetes, *[]string) {
	t.Helper()
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	var writes []string
	record := func(verb string, obj client.Object) { writes = append(writes, fmt.Sprintf("%s %T", verb, obj)) }
	c := interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			record("create", obj)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			record("update", obj)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			record("patch", obj)
			return c.Patch(ctx, obj, p, opts...)
		},
	})
	return kernelruntime.NewKubernetes(c, env.Scheme, k8sTestOptions), &writes
}

func k8sPostgres(schema string) smsv1.TenantStorage {
	return smsv1.TenantStorage{Driver: smsv1.StoragePostgres, Postgres: &smsv1.PostgresStorage{
		URLSecretRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "pg"}, Key: "url"},
		Schema:       schema,
	}}
}

func k8sScriptedModel() *smsv1.TenantModel {
	return &smsv1.TenantModel{
		Provider:           "scripted",
		Name:               "demo",
		BaseURL:            "http://model.example",
		KeySecretRef:       &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "model"}, Key: "apiKey"},
		ScriptConfigMapRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "script"}, Key: "demo.json"},
	}
}
