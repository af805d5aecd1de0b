package testenv

import (
	"errors"
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/envtestbin"
)

// Options choose what the API server gets besides the sms CRDs.
type Options struct {
	// Webhooks installs config/webhook's configurations, pointed at a
	// local webhook server whose host, port and certificates are in
	// Env.WebhookInstallOptions.
	Webhooks bool
	// Ready, when set, runs once the API server is up, before the tests.
	Ready func(*Env) error
}

// Env is a running kube-apiserver and etcd with the sms CRDs installed.
type Env struct {
	*envtest.Environment
	// Config is an admin's (system:masters) client configuration.
	Config *rest.Config
	// Client is an admin's client, with the sms types in its scheme.
	Client client.Client
	// Scheme holds the built-in and sms types.
	Scheme *runtime.Scheme
	// Root is the repository's root directory.
	Root string
}

// Start starts the API server with the CRDs from config/crd/bases.
func Start(opts Options) (*Env, error) {
	assets, err := envtestbin.Assets()
	if err != nil {
		return nil, err
	}
	root, err := envtestbin.RepoRoot()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := smsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	if opts.Webhooks {
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(root, "config", "webhook")},
		}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start envtest (kube-apiserver and etcd from %s): %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return &Env{Environment: env, Config: cfg, Client: c, Scheme: scheme, Root: root}, nil
}

// User returns a client configuration authenticated as name in groups
// (system:authenticated is implied), with no permissions beyond what
// RBAC objects in the cluster grant it.
func (e *Env) User(name string, groups ...string) (*rest.Config, error) {
	u, err := e.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", name, err)
	}
	return u.Config(), nil
}
