package webhook_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/webhook"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
)

// operator is the operator's own user; the webhooks trust it.
const operator = "system:serviceaccount:sms-system:sms-controller-manager"

// now is the webhooks' clock; decidedAt is how it is stamped.
var (
	now       = time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)
	decidedAt = "2026-12-01T10:30:00Z"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	testenv.Main(m, testenv.Options{Webhooks: true}, &env)
}

var (
	usersOnce sync.Once
	users     map[string]client.Client
	usersErr  error
)

// as returns a client authenticated as user: alice, bob, carol or
// operator.
func as(t *testing.T, user string) client.Client {
	t.Helper()
	testenv.Need(t)
	usersOnce.Do(func() {
		users = map[string]client.Client{}
		for _, name := range []string{"alice", "bob", "carol", operator} {
			cfg, err := env.User(name)
			if err != nil {
				usersErr = err
				return
			}
			if users[name], err = client.New(cfg, client.Options{Scheme: env.Scheme}); err != nil {
				usersErr = err
				return
			}
		}
	})
	must(t, usersErr)
	return users[user]
}

// serve runs a manager serving the webhooks on the address the API server
// calls until t ends.
func serve(t *testing.T) { serveNamespaces(t, nil) }

// serveNamespaces is serve for an operator that reconciles only namespaces
// (all when nil).
func serveNamespaces(t *testing.T, namespaces []string) {
	t.Helper()
	testenv.Need(t)
	wo := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: ctrlwebhook.NewServer(ctrlwebhook.Options{
			Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir,
		}),
	})
	must(t, err)
	must(t, webhook.Register(mgr, webhook.Options{OperatorUser: operator, Now: func() time.Time { return now }, Namespaces: namespaces}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	started := mgr.GetWebhookServer().StartedChecker()
	deadline := time.Now().Add(30 * time.Second)
	for err = started(nil); err != nil; err = started(nil) {
		if time.Now().After(deadline) {
			t.Fatalf("webhook server: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// newNamespace creates a namespace holding Tenant "t" (forbidding
// self-approval or not), in which alice, bob, carol and the operator may
// edit Plugins and Approvals, and alice and bob hold the approve verb.
func newNamespace(t *testing.T, forbidSelfApproval bool) string {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "webhook-"}}
	must(t, env.Client.Create(ctx, ns))
	editors := []string{"alice", "bob", "carol", operator}
	objs := []client.Object{
		role(ns.Name, "editor", "get", "list", "watch", "create", "update", "patch"),
		binding(ns.Name, "editor", editors...),
		role(ns.Name, "approver", webhook.VerbApprove),
		binding(ns.Name, "approver", "alice", "bob"),
		&smsv1.Tenant{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "t"},
			Spec:       smsv1.TenantSpec{Judge: smsv1.TenantJudge{ForbidSelfApproval: forbidSelfApproval}},
		},
	}
	for _, obj := range objs {
		must(t, env.Client.Create(ctx, obj))
	}
	return ns.Name
}

func role(ns, name string, verbs ...string) *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{smsv1.GroupVersion.Group},
			Resources: []string{"plugins", "approvals"},
			Verbs:     verbs,
		}},
	}
}

func binding(ns, name string, users ...string) *rbacv1.RoleBinding {
	b := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
	}
	for _, u := range users {
		b.Subjects = append(b.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: u})
	}
	return b
}

// newPlugin returns Plugin name of Tenant "t" in ns.
func newPlugin(ns, name string, annotations map[string]string) *smsv1.Plugin {
	code := "export default async function activate(cap) {}"
	return &smsv1.Plugin{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: smsv1.PluginSpec{
			TenantRef: corev1.LocalObjectReference{Name: "t"},
			ID:        "agent." + name,
			Version:   "1.0.0",
			Code:      &code,
		},
	}
}

// newApproval returns an Approval for Plugin plugin in ns.
func newApproval(ns, plugin, requestedBy string) *smsv1.Approval {
	return &smsv1.Approval{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "approve-" + plugin + "-"},
		Spec: smsv1.ApprovalSpec{
			PluginRef:   corev1.LocalObjectReference{Name: plugin},
			PluginID:    plugin,
			CodeHash:    "sha256:0123",
			Declaration: &smsv1.Declaration{Points: []string{"route"}},
			RequestedBy: requestedBy,
		},
	}
}

// update applies change to obj as c with a merge patch; obj then holds
// what the API server stored.
func update[T client.Object](t *testing.T, c client.Client, obj T, change func(T)) error {
	t.Helper()
	base := obj.DeepCopyObject().(T)
	change(obj)
	return c.Patch(t.Context(), obj, client.MergeFrom(base))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkErr fails unless err contains want, or is nil when want is empty.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("got error %v, want none", err)
	case want != "" && err == nil:
		t.Fatalf("got no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("got error %q, want one containing %q", err, want)
	}
}

func checkAnnotation(t *testing.T, obj client.Object, key, want string) {
	t.Helper()
	got, ok := obj.GetAnnotations()[key]
	switch {
	case want == "" && ok:
		t.Errorf("%s: got %q, want none", key, got)
	case want != "" && got != want:
		t.Errorf("%s: got %q, want %q", key, got, want)
	}
}
