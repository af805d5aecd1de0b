package controllers_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/controllers"
	"github.com/sms-baseline/sms/internal/operator"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

var (
	env *testenv.Env
	// fastAdmin is an admin client without client-go's default limit of 5
	// requests per second, which would throttle the benchmarks' bursts.
	fastAdmin client.Client
)

func TestMain(m *testing.M) {
	if os.Getenv("SMS_TEST_LOG") == "1" { // the operator's logs, for debugging a failing test
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	testenv.Main(m, testenv.Options{Webhooks: true, Ready: func(e *testenv.Env) error {
		cfg := rest.CopyConfig(e.Config)
		cfg.QPS, cfg.Burst = 1000, 1000
		var err error
		if fastAdmin, err = client.New(cfg, client.Options{Scheme: e.Scheme}); err != nil {
			return err
		}
		return grantOperatorRole(e)
	}}, &env)
}

// grantOperatorRole binds the ClusterRole make manifests generates
// (config/rbac/role.yaml) to the operator's test identity, which has no
// other permission: every test shows the operator needs no verb the
// role lacks. Seen failing with delete on plugins missing from the role
// (the mirror could not remove an uninstalled agent plugin's Plugin).
func grantOperatorRole(e *testenv.Env) error {
	raw, err := os.ReadFile(filepath.Join(e.Root, "config", "rbac", "role.yaml"))
	if err != nil {
		return err
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(raw, &role); err != nil {
		return fmt.Errorf("config/rbac/role.yaml: %w", err)
	}
	role.Name = "sms-operator-under-test"
	ctx := context.Background()
	if err := e.Client.Create(ctx, &role); err != nil {
		return err
	}
	return e.Client.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: operatorUser}}})
}

// operatorUser is the identity the operator runs as in these tests.
const operatorUser = "sms-operator-under-test"

// world is one test's namespace, with an operator running against it.
type world struct {
	t       testing.TB
	ns      string
	dataDir string
	admin   client.Client
	stop    func()
	// poll is the operator's resync period: long, so the tests show
	// that events and watches, not polling, drive every reaction.
	poll time.Duration
	// wrap, when set, wraps the transport of the operator's requests.
	wrap func(http.RoundTripper) http.RoundTripper
}

// newWorld makes a namespace and starts an operator with the local
// runtime; the operator stops when the test ends.
func newWorld(t testing.TB) *world {
	t.Helper()
	return newWorldPolling(t, time.Hour)
}

// newWorldPolling is newWorld with the operator's resync period.
func newWorldPolling(t testing.TB, poll time.Duration) *world {
	t.Helper()
	return newWorldWrapped(t, poll, nil)
}

// newWorldWrapped is newWorldPolling with the operator's transport
// wrapped by wrap (nil: not wrapped).
func newWorldWrapped(t testing.TB, poll time.Duration, wrap func(http.RoundTripper) http.RoundTripper) *world {
	t.Helper()
	testenv.Need(t)
	ns := fmt.Sprintf("t-%d", time.Now().UnixNano()%1_000_000_000)
	w := &world{t: t, ns: ns, dataDir: t.TempDir(), admin: fastAdmin, poll: poll, wrap: wrap}
	w.must(env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	w.start()
	t.Cleanup(func() { w.stop() })
	return w
}

// start runs an operator; stop (or the test's end) stops it and its kernels.
func (w *world) start() {
	w.t.Helper()
	cfg, err := env.User(operatorUser)
	w.must(err)
	if w.wrap != nil {
		cfg.Wrap(w.wrap)
	}
	wh := env.WebhookInstallOptions
	op, err := operator.New(cfg, operator.Options{
		Runtime: operator.RuntimeLocal, DataDir: w.dataDir, LocalExecutor: "goja",
		MetricsAddr: "0", ProbeAddr: "0",
		Webhook:      webhook.Options{Host: wh.LocalServingHost, Port: wh.LocalServingPort, CertDir: wh.LocalServingCertDir},
		OperatorUser: operatorUser, Poll: w.poll,
		Namespaces: []string{w.ns}, SkipNameValidation: true,
	})
	w.must(err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	w.stop = func() {
		cancel()
		if err := <-done; err != nil {
			w.t.Errorf("operator stopped with %v", err)
		}
		op.Close()
		w.stop = func() {}
	}
	w.eventually("the admission webhooks answer", webhookAnswers)
}

// webhookAnswers completes a TLS handshake with the webhook server and
// then a dry-run write through the API server for each kind the
// webhooks admit: a write right after start must not race the server's
// start, nor meet a connection the API server dialed to the previous
// world's server as it shut down (it then fails the write: "failed
// calling webhook ... http2: client conn could not be established").
// A write the webhook or the schema refuses still shows the webhook
// answered.
func webhookAnswers() error {
	wh := env.WebhookInstallOptions
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(wh.LocalServingCAData)
	addr := net.JoinHostPort(wh.LocalServingHost, strconv.Itoa(wh.LocalServingPort))
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr,
		&tls.Config{RootCAs: roots, ServerName: wh.LocalServingHost, MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	if err := conn.Close(); err != nil {
		return err
	}
	probe := metav1.ObjectMeta{Name: "webhook-probe", Namespace: "default"}
	for _, obj := range []client.Object{&smsv1.Plugin{ObjectMeta: probe}, &smsv1.Approval{ObjectMeta: probe}} {
		err := env.Client.Create(context.Background(), obj, client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "failed calling webhook") {
			return err
		}
	}
	return nil
}

// restart stops the operator and its kernels and starts new ones on the
// same data, as a crashed and rescheduled manager would.
func (w *world) restart() {
	w.t.Helper()
	w.stop()
	w.start()
}

func (w *world) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

// eventually polls check until it returns nil, failing after 30 s with
// its last error.
func (w *world) eventually(what string, check func() error) {
	w.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (w *world) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: w.ns, Name: name}
}

// tenant applies a Tenant and waits until it is Ready.
func (w *world) tenant(name string, judge smsv1.TenantJudge) *smsv1.Tenant {
	w.t.Helper()
	t := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: smsv1.TenantSpec{Judge: judge}}
	w.must(w.admin.Create(context.Background(), t))
	w.eventually("tenant "+name+" Ready", func() error {
		if err := w.admin.Get(context.Background(), w.key(name), t); err != nil {
			return err
		}
		return condIs(t.Status.Conditions, smsv1.ConditionReady, true)
	})
	return t
}

// plugin applies a Plugin as c (a user's client, or the admin's).
func (w *world) plugin(c client.Client, name, id, code string) *smsv1.Plugin {
	w.t.Helper()
	p := &smsv1.Plugin{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: smsv1.PluginSpec{TenantRef: corev1.LocalObjectReference{Name: "acme"}, ID: id, Version: "1", Code: &code}}
	if strings.Contains(code, "contribute('route'") {
		p.Spec.Points = []string{"route"}
	}
	w.must(c.Create(context.Background(), p))
	return p
}

// waitPlugin waits until the Plugin's conditions hold.
func (w *world) waitPlugin(name string, want map[string]bool) *smsv1.Plugin {
	w.t.Helper()
	var p smsv1.Plugin
	w.eventually("plugin "+name+" conditions", func() error {
		if err := w.admin.Get(context.Background(), w.key(name), &p); err != nil {
			return err
		}
		if p.Status.ObservedGeneration != p.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", p.Status.ObservedGeneration, p.Generation)
		}
		for typ, ok := range want {
			if err := condIs(p.Status.Conditions, typ, ok); err != nil {
				return err
			}
		}
		return nil
	})
	return &p
}

// kernel returns a client for the tenant's kernel.
func (w *world) kernel(tenant string) *adminv1.Client {
	w.t.Helper()
	var t smsv1.Tenant
	w.must(w.admin.Get(context.Background(), w.key(tenant), &t))
	var s corev1.Secret
	w.must(w.admin.Get(context.Background(), w.key(controllers.AdminTokenSecretName(tenant)), &s))
	return adminv1.New(t.Status.AdminEndpoint, string(s.Data[smsv1.SecretKeyToken]), nil)
}

// chatKernel returns a client of the tenant's kernel with the chat
// credential, the one kubectl sms uses.
func (w *world) chatKernel(tenant string) *adminv1.Client {
	w.t.Helper()
	var t smsv1.Tenant
	w.must(w.admin.Get(context.Background(), w.key(tenant), &t))
	var s corev1.Secret
	w.must(w.admin.Get(context.Background(), w.key(t.Status.ChatTokenSecret), &s))
	return adminv1.New(t.Status.AdminEndpoint, string(s.Data[smsv1.SecretKeyToken]), nil)
}

// user returns a client for a user with the given verbs on plugins and
// approvals in the world's namespace (plus "approve" when approver).
func (w *world) user(name string, approver bool, groups ...string) client.Client {
	w.t.Helper()
	cfg, err := env.User(name, groups...)
	w.must(err)
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"sms.dev"}, Resources: []string{"plugins", "approvals", "tenants"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}
	if approver {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"sms.dev"}, Resources: []string{"approvals"}, Verbs: []string{"approve"}})
	}
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}, Rules: rules}
	w.must(w.admin.Create(ctx, role))
	w.must(w.admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: name}}}))
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	w.must(err)
	return c
}

func condIs(conds []metav1.Condition, typ string, want bool) error {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil {
		return fmt.Errorf("no %s condition yet", typ)
	}
	if (c.Status == metav1.ConditionTrue) != want {
		return fmt.Errorf("%s is %s (%s: %s), want %v", typ, c.Status, c.Reason, c.Message, want)
	}
	return nil
}
