package operator

import (
	"fmt"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/controllers"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	localruntime "github.com/sms-baseline/sms/internal/operator/kernelruntime/local"
	"github.com/sms-baseline/sms/kernelcmd"
)

// Runtimes.
const (
	RuntimeKubernetes = "kubernetes"
	RuntimeLocal      = "local"
)

// Options configure the operator.
type Options struct {
	// Runtime is kubernetes (StatefulSets) or local (kernels inside this
	// process). Default kubernetes.
	Runtime string
	// KernelImage is the image of kernel pods (kubernetes runtime).
	KernelImage string
	// KernelCommand is the kernel container's command when it runs
	// KernelImage (kubernetes runtime); empty runs the image's entrypoint.
	// A Tenant's spec.image always runs its entrypoint.
	KernelCommand []string
	// DataDir holds the local runtime's tenants.
	DataDir string
	// LocalExecutor overrides tenants' executors in the local runtime.
	LocalExecutor string
	// LocalModel is, in the local runtime, the model of tenants whose
	// spec names none (manager dev's scripted demo model).
	LocalModel kernelcmd.Model
	// LocalImages maps, in the local runtime, a Tenant's spec.image to the
	// kernel binary run for it as a child process.
	LocalImages map[string]string
	// LocalSystemPlugins are, in the local runtime, optional system
	// plugins every kernel runs (manager dev's console).
	LocalSystemPlugins []string
	// Logger receives the local kernels' logs.
	Logger *slog.Logger
	// MetricsAddr serves Prometheus metrics; "0" disables them.
	MetricsAddr string
	// SecureMetrics serves metrics over HTTPS behind authentication and
	// authorization, as in a cluster.
	SecureMetrics bool
	// ProbeAddr serves /healthz and /readyz; "0" disables them.
	ProbeAddr string
	// LeaderElection makes one replica at a time reconcile.
	LeaderElection bool
	// LeaderElectionNamespace holds the lease when not running in a pod.
	LeaderElectionNamespace string
	// Webhook is the webhook server's address and certificates; a zero
	// Port disables the webhooks.
	Webhook webhook.Options
	// WebhookCerts, when its Secret is set, has the operator manage the
	// webhooks' certificate itself instead of reading cert-manager's.
	WebhookCerts WebhookCerts
	// OperatorUser is the operator's own identity, trusted by the webhooks.
	OperatorUser string
	// OperatorNamespace is where the operator's pods run; the kernels'
	// NetworkPolicy admits only them to the admin port.
	OperatorNamespace string
	// Poll is the resync period of tenants (default 5 minutes); StreamIdle
	// how long a silent kernel event stream is trusted.
	Poll, StreamIdle time.Duration
	// Namespaces limits the operator to these namespaces; empty watches all.
	Namespaces []string
	// QPS and Burst bound the operator's requests to the API server.
	// Default 100 and 200: each plugin costs a few writes, and client-go's
	// default of 5 per second would make a burst of plugins queue for
	// seconds.
	QPS   float32
	Burst int
	// SkipNameValidation lets several operators run in one process (tests).
	SkipNameValidation bool
}

// Operator is a configured manager and its kernel runtime.
type Operator struct {
	ctrl.Manager
	Runtime kernelruntime.Runtime
	// Close stops the local runtime's kernels (a no-op for kubernetes).
	Close func()
}

// Scheme returns a scheme with the built-in and sms.dev types.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := smsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// labelledOnly restricts the cache of the built-in kinds the operator
// reads to objects labelled sms.dev/tenant: the ones it creates for a
// tenant, and Secrets and ConfigMaps a person labelled so that a change to
// them reaches the kernel at once. Every other Secret and ConfigMap in the
// cluster stays out of the operator's memory; one a Tenant or Plugin
// references without the label is read from the API server when needed.
func labelledOnly() map[client.Object]cache.ByObject {
	sel, err := labels.Parse(smsv1.LabelTenant)
	if err != nil {
		panic(err) // a constant that parses
	}
	out := map[client.Object]cache.ByObject{}
	for _, obj := range []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}, &corev1.Service{},
		&appsv1.StatefulSet{}, &networkingv1.NetworkPolicy{}} {
		out[obj] = cache.ByObject{Label: sel}
	}
	return out
}

// New builds the operator on cfg. Start it with Start(ctx).
func New(cfg *rest.Config, opts Options) (*Operator, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	if cfg.QPS <= 0 {
		cfg.QPS = 100
	}
	if cfg.Burst <= 0 {
		cfg.Burst = 200
	}
	mopts := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr, SecureServing: opts.SecureMetrics},
		HealthProbeBindAddress:  opts.ProbeAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        "sms-operator.sms.dev",
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		// The leader steps down when the manager stops, so a restarted or
		// rolled-out operator takes over at once instead of waiting out
		// the lease.
		LeaderElectionReleaseOnCancel: true,
	}
	mopts.Cache.ByObject = labelledOnly()
	if len(opts.Namespaces) > 0 {
		mopts.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range opts.Namespaces {
			mopts.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	if opts.SkipNameValidation {
		skip := true
		mopts.Controller.SkipNameValidation = &skip
	}
	if opts.Webhook.Port != 0 {
		mopts.WebhookServer = webhook.NewServer(opts.Webhook)
	}
	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	op := &Operator{Manager: mgr, Close: func() {}}
	switch opts.Runtime {
	case "", RuntimeKubernetes:
		op.Runtime = kernelruntime.NewKubernetes(mgr.GetClient(), scheme,
			kernelruntime.KubernetesOptions{Image: opts.KernelImage, Command: opts.KernelCommand, OperatorNamespace: opts.OperatorNamespace})
	case RuntimeLocal:
		local := localruntime.New(localruntime.Options{Dir: opts.DataDir, Executor: opts.LocalExecutor,
			DefaultModel: opts.LocalModel, Images: opts.LocalImages, Logger: opts.Logger,
			SystemPlugins: opts.LocalSystemPlugins})
		op.Runtime, op.Close = local, local.Close
	default:
		return nil, fmt.Errorf("runtime %q: want kubernetes or local", opts.Runtime)
	}
	err = controllers.Setup(mgr, controllers.Options{Runtime: op.Runtime, OwnsStatefulSets: opts.Runtime != RuntimeLocal,
		Poll: opts.Poll, StreamIdle: opts.StreamIdle})
	if err != nil {
		return nil, err
	}
	if opts.Webhook.Port != 0 {
		if err := registerWebhooks(mgr, opts); err != nil {
			return nil, err
		}
	}
	if opts.ProbeAddr != "0" && opts.ProbeAddr != "" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return nil, err
		}
	}
	return op, nil
}
