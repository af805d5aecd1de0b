package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/internal/operator"
	"github.com/sms-baseline/sms/kernelcmd"
)

// Options configure a development environment.
type Options struct {
	// Dir holds everything: etcd/, data/, kubeconfig and dev.lock.
	Dir string
	// Root is the repository: config/crd/bases, config/webhook and
	// hack/setup-envtest.sh are read from it.
	Root string
	// Model is the chat model of tenants whose spec names none.
	Model kernelcmd.Model
	// Executor, when set, replaces every tenant's executor.
	Executor string
	// Images maps a Tenant's spec.image to the kernel binary that runs
	// for it (the local runtime's Options.Images).
	Images map[string]string
	// Progress receives what a person waiting should see. Default stderr.
	Progress io.Writer
	// Logger receives the kernels' logs. Default: discarded.
	Logger *slog.Logger
}

// Env is a running control plane and operator.
type Env struct {
	// Dir is Options.Dir, absolute.
	Dir string
	// Kubeconfig is the administrator's kubeconfig (system:masters).
	Kubeconfig string
	// Config is the same identity as a client configuration.
	Config *rest.Config

	env  *envtest.Environment
	op   *operator.Operator
	lock *lock
}

// Start takes the directory's lock, starts kube-apiserver and etcd (etcd
// keeping its data in Dir/etcd), installs the CRDs and webhook
// configurations and builds the operator. Run starts reconciling and
// writes the kubeconfig; Stop undoes everything Start did.
func Start(opts Options) (*Env, error) {
	if opts.Progress == nil {
		opts.Progress = os.Stderr
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "etcd"), 0o700); err != nil {
		return nil, fmt.Errorf("make %s: %w", dir, err)
	}
	lk, err := acquire(filepath.Join(dir, "dev.lock"))
	if err != nil {
		return nil, err
	}
	e := &Env{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"), lock: lk}
	if err := e.start(opts); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

func (e *Env) start(opts Options) error {
	bin, err := assets(opts.Root, opts.Progress)
	if err != nil {
		return err
	}
	e.env = &envtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDDirectoryPaths:     []string{filepath.Join(opts.Root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{filepath.Join(opts.Root, "config", "webhook")}},
		ControlPlane:          envtest.ControlPlane{Etcd: &envtest.Etcd{DataDir: filepath.Join(e.Dir, "etcd")}},
	}
	_, _ = fmt.Fprintln(opts.Progress, "Starting kube-apiserver and etcd...")
	if _, err := e.env.Start(); err != nil {
		e.env = nil
		return fmt.Errorf("start kube-apiserver and etcd from %s: %w", bin, err)
	}
	admin, err := e.env.AddUser(envtest.User{Name: "sms-dev-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("add the administrator: %w", err)
	}
	e.Config = admin.Config()
	return e.newOperator(opts)
}

// operatorUser is the operator's identity, trusted by the webhooks.
const operatorUser = "system:serviceaccount:sms-system:sms-controller-manager"

func (e *Env) newOperator(opts Options) error {
	user, err := e.env.AddUser(envtest.User{Name: operatorUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("add the operator's user: %w", err)
	}
	wh := e.env.WebhookInstallOptions
	e.op, err = operator.New(user.Config(), operator.Options{
		Runtime: operator.RuntimeLocal, DataDir: filepath.Join(e.Dir, "data"),
		LocalExecutor: opts.Executor, LocalModel: opts.Model, LocalImages: opts.Images, Logger: opts.Logger,
		LocalSystemPlugins: []string{baseline.ServiceConsole},
		MetricsAddr:        "0", ProbeAddr: "0", OperatorUser: operatorUser,
		Webhook: webhook.Options{Host: wh.LocalServingHost, Port: wh.LocalServingPort, CertDir: wh.LocalServingCertDir},
	})
	return err
}

// Run reconciles until ctx ends. Once the webhook server answers, it
// writes the kubeconfig and calls ready: a kubeconfig that exists means
// the whole product is up, so nothing applied through it meets a webhook
// that is not listening yet.
func (e *Env) Run(ctx context.Context, ready func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.op.Start(ctx) }()
	if err := e.waitWebhook(ctx, done); err != nil {
		cancel()
		return errors.Join(err, <-done)
	}
	if err := writeKubeconfig(e.Kubeconfig, e.Config); err != nil {
		cancel()
		return errors.Join(err, <-done)
	}
	if ready != nil {
		ready()
	}
	return <-done
}

// waitWebhook waits until the webhook server accepts TLS connections.
func (e *Env) waitWebhook(ctx context.Context, done chan error) error {
	check := e.op.GetWebhookServer().StartedChecker()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
		if check(req) == nil {
			return nil
		}
		select {
		case err := <-done:
			done <- err // Run reports it
			return errors.New("the operator stopped before its webhook served")
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Stop stops the kernels, the control plane and releases the lock. The
// kubeconfig is removed: it names an API server that is gone.
func (e *Env) Stop() error {
	var errs []error
	if e.op != nil {
		e.op.Close()
	}
	if e.env != nil {
		errs = append(errs, e.env.Stop())
		_ = os.Remove(e.Kubeconfig)
	}
	if e.lock != nil {
		errs = append(errs, e.lock.release())
		e.lock = nil
	}
	return errors.Join(errs...)
}
