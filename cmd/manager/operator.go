package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/sms-baseline/sms/internal/operator"
)

// operatorFlags are the flags of `manager operator`.
type operatorFlags struct {
	opts           operator.Options
	webhookPort    int
	webhookCertDir string
	kubeconfig     string
	zap            zap.Options
}

// newOperatorCommand returns `manager operator`: the controllers and
// webhooks, in a cluster or against any API server.
func newOperatorCommand() *cobra.Command {
	f := &operatorFlags{zap: zap.Options{Development: false}}
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Reconcile Tenants, Plugins and Approvals: run each tenant's kernel and judge plugins through it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))
			return runOperator(cmd, f)
		},
	}
	fl := cmd.Flags()
	o := &f.opts
	fl.StringVar(&o.Runtime, "runtime", operator.RuntimeKubernetes, "where kernels run: kubernetes (a StatefulSet per tenant) or local (inside this process)")
	fl.StringVar(&o.KernelImage, "kernel-image", os.Getenv("SMS_KERNEL_IMAGE"), "image of kernel pods (default $SMS_KERNEL_IMAGE: the operator's own image)")
	fl.StringSliceVar(&o.KernelCommand, "kernel-command", splitEnv("SMS_KERNEL_COMMAND"), "command of kernel pods that run --kernel-image, e.g. /sms-kernel, the image's kernel binary (default $SMS_KERNEL_COMMAND; empty: the image's entrypoint); a Tenant's spec.image always runs its entrypoint")
	fl.StringVar(&o.OperatorNamespace, "operator-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the operator's pods, the only ones kernels admit to their admin port (default $POD_NAMESPACE)")
	fl.StringVar(&o.DataDir, "data-dir", ".sms/data", "tenants' data under the local runtime")
	fl.StringVar(&o.MetricsAddr, "metrics-bind-address", "0", "address of the metrics endpoint (:8443 for HTTPS, :8080 for HTTP); 0 disables it")
	fl.BoolVar(&o.SecureMetrics, "metrics-secure", true, "serve metrics over HTTPS behind Kubernetes authentication and authorization")
	fl.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fl.BoolVar(&o.LeaderElection, "leader-elect", false, "elect a leader, so only one replica reconciles at a time")
	fl.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader lease when not running in a pod")
	fl.StringVar(&o.OperatorUser, "operator-user", os.Getenv("SMS_OPERATOR_USER"), "the operator's own user name, trusted by the webhooks (default $SMS_OPERATOR_USER)")
	fl.StringSliceVar(&o.Namespaces, "namespaces", nil, "watch only these namespaces (default all)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fl.IntVar(&f.webhookPort, "webhook-port", 9443, "port of the admission webhooks; 0 disables them")
	fl.StringVar(&f.webhookCertDir, "webhook-cert-path", "", "directory with tls.crt and tls.key for the webhooks (default: controller-runtime's)")
	c := &o.WebhookCerts
	fl.StringVar(&c.Secret, "webhook-cert-secret", "", "manage the webhooks' certificate in this Secret of the operator's namespace, without cert-manager; mount the Secret at --webhook-cert-path (default: only read the certificate there)")
	fl.StringVar(&c.Service, "webhook-service", "sms-webhook-service", "the webhooks' Service, named in the certificate --webhook-cert-secret makes")
	fl.StringVar(&c.Mutating, "webhook-mutating-configuration", "sms-mutating-webhook-configuration", "the MutatingWebhookConfiguration given the CA of --webhook-cert-secret")
	fl.StringVar(&c.Validating, "webhook-validating-configuration", "sms-validating-webhook-configuration", "the ValidatingWebhookConfiguration given the CA of --webhook-cert-secret")
	return cmd
}

func runOperator(cmd *cobra.Command, f *operatorFlags) error {
	switch f.opts.Runtime {
	case operator.RuntimeKubernetes:
		if f.opts.KernelImage == "" {
			return fmt.Errorf("--kernel-image is required with --runtime kubernetes (or set SMS_KERNEL_IMAGE)")
		}
	case operator.RuntimeLocal:
	default:
		return fmt.Errorf("--runtime %q: want kubernetes or local", f.opts.Runtime)
	}
	if f.webhookPort != 0 {
		f.opts.Webhook = webhook.Options{Port: f.webhookPort, CertDir: f.webhookCertDir}
	}
	cfg, err := ctrl.GetConfig()
	if f.kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	}
	if err != nil {
		return fmt.Errorf("find the cluster (in-cluster config, --kubeconfig or KUBECONFIG): %w", err)
	}
	op, err := operator.New(cfg, f.opts)
	if err != nil {
		return err
	}
	defer op.Close()
	ctrl.Log.Info("Starting the operator", "runtime", f.opts.Runtime, "namespaces", strings.Join(f.opts.Namespaces, ","))
	return op.Start(ctrl.SetupSignalHandler())
}

// splitEnv returns the comma-separated values of environment variable
// name, or nil when it is empty.
func splitEnv(name string) []string {
	if v := os.Getenv(name); v != "" {
		return strings.Split(v, ",")
	}
	return nil
}
