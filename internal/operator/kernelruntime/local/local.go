package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/kernelcmd"
)

// Options configure the local runtime.
type Options struct {
	// Dir holds one directory per tenant (namespace/name) with its SQLite
	// file, its secrets as 0600 files and the port it last listened on.
	Dir string
	// Executor, when set, replaces every tenant's spec.executor: goja in
	// test binaries, which cannot start the isolated executor's sandbox.
	Executor string
	// Logger receives the kernels' logs. Default: discarded.
	Logger *slog.Logger
	// DefaultModel is the model of tenants whose spec.model is empty;
	// none when its Provider is empty. Its key, when it needs one, comes
	// from KeyFile or the provider's usual environment variables.
	DefaultModel kernelcmd.Model
	// Images maps a Tenant's spec.image to the kernel binary that stands
	// for it here, such as an application's kernel built from
	// kernelcmd.App. Such a tenant's kernel runs as a child process, with
	// the arguments the kubernetes runtime gives its pod; a tenant without
	// spec.image runs the manager's own kernel inside this process.
	Images map[string]string
	// SystemPlugins are optional system plugins every kernel runs on top
	// of its tenant's spec.systemPlugins (manager dev's console).
	SystemPlugins []string
}

// Runtime runs kernels inside this process, or as child processes for
// tenants with an image (Options.Images), on loopback ports. It suits
// `manager dev` and test suites, where no kubelet runs pods. A kernel
// keeps its port across restarts when the port is still free, so
// endpoints stay stable.
type Runtime struct {
	opts    Options
	mu      sync.Mutex
	kernels map[types.NamespacedName]*localKernel
}

type localKernel struct {
	hash     string
	endpoint string
	cancel   context.CancelFunc
	done     chan struct{}
}

// New returns a local runtime storing data under opts.Dir.
func New(opts Options) *Runtime {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runtime{opts: opts, kernels: map[types.NamespacedName]*localKernel{}}
}

// Ensure implements kernelruntime.Runtime: it starts the kernel, restarts it when its
// configuration changed, and stops it when the tenant is suspended.
func (l *Runtime) Ensure(ctx context.Context, spec kernelruntime.Spec) (kernelruntime.Status, error) {
	key := types.NamespacedName{Namespace: spec.Tenant.Namespace, Name: spec.Tenant.Name}
	l.mu.Lock()
	defer l.mu.Unlock()
	running := l.kernels[key]
	if spec.Tenant.Spec.Suspend {
		l.stop(key)
		return kernelruntime.Status{Message: "suspended"}, nil
	}
	dir := filepath.Join(l.opts.Dir, key.Namespace, key.Name)
	cfg, err := l.config(dir, spec)
	if err != nil {
		return kernelruntime.Status{}, err
	}
	bin, err := l.binary(spec.Tenant)
	if err != nil {
		return kernelruntime.Status{}, err
	}
	hash := configHash(cfg, spec) + bin
	if running != nil && running.hash == hash {
		select {
		case <-running.done:
			l.stop(key) // it died: start it again below
		default:
			return kernelruntime.Status{Endpoint: running.endpoint, AdminEndpoint: running.endpoint, Running: true}, nil
		}
	}
	l.stop(key)
	var k *localKernel
	if bin != "" {
		k, err = l.startChild(dir, bin, cfg)
	} else {
		k, err = l.start(dir, cfg)
	}
	if err != nil {
		return kernelruntime.Status{}, err
	}
	k.hash = hash
	l.kernels[key] = k
	return kernelruntime.Status{Endpoint: k.endpoint, AdminEndpoint: k.endpoint, Running: true}, nil
}

// Remove implements kernelruntime.Runtime: the kernel stops and its data stays.
func (l *Runtime) Remove(_ context.Context, tenant types.NamespacedName) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stop(tenant)
	return nil
}

// Close stops every kernel.
func (l *Runtime) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key := range l.kernels {
		l.stop(key)
	}
}

// stop stops a kernel and waits for it; the caller holds l.mu.
func (l *Runtime) stop(key types.NamespacedName) {
	k := l.kernels[key]
	if k == nil {
		return
	}
	k.cancel()
	<-k.done
	delete(l.kernels, key)
}

// start opens the kernel and serves it on its previous port, or a new one.
func (l *Runtime) start(dir string, cfg kernelcmd.Config) (*localKernel, error) {
	ln, err := listenLoopback(filepath.Join(dir, "port"))
	if err != nil {
		return nil, err
	}
	logger := l.opts.Logger.With("kernel", cfg.Name)
	ctx, cancel := context.WithCancel(context.Background())
	b, err := kernelcmd.Start(ctx, cfg, logger)
	if err != nil {
		cancel()
		return nil, errors.Join(fmt.Errorf("start kernel %s: %w", cfg.Name, err), ln.Close())
	}
	k := &localKernel{endpoint: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(k.done)
		if err := b.Serve(ctx, ln, baseline.ServeOptions{}); err != nil && ctx.Err() == nil {
			logger.Error("Kernel stopped", "error", err)
		}
		if err := b.Close(); err != nil {
			logger.Error("Close kernel", "error", err)
		}
	}()
	return k, nil
}

// listenLoopback listens on 127.0.0.1 at the port recorded in file when it
// is free, else on a new port, and records the port it got.
func listenLoopback(file string) (net.Listener, error) {
	if raw, err := os.ReadFile(file); err == nil {
		if port, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && port > 0 {
			if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				return ln, nil
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(file, []byte(strconv.Itoa(port)+"\n"), 0o600); err != nil {
		return nil, errors.Join(fmt.Errorf("record the kernel's port: %w", err), ln.Close())
	}
	return ln, nil
}

// config writes the tenant's secrets into dir and returns its kernel's
// settings.
func (l *Runtime) config(dir string, spec kernelruntime.Spec) (kernelcmd.Config, error) {
	t := spec.Tenant
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return kernelcmd.Config{}, fmt.Errorf("tenant data directory: %w", err)
	}
	cfg := kernelcmd.Config{
		Name:        t.Namespace + "/" + t.Name,
		Tenant:      t.Namespace + "/" + t.Name,
		Store:       "sqlite:" + filepath.Join(dir, "kernel.db"),
		Executor:    string(t.Spec.Executor),
		AutoApprove: t.Spec.Judge.AutoApprove, SystemPlugins: kernelruntime.SystemPluginNames(t.Spec.SystemPlugins),
		SafeMode: t.Spec.SafeMode, AgentCapabilities: t.Spec.Judge.AgentCapabilities,
	}
	cfg.Approvers, cfg.ApproverGroups = kernelruntime.Approvers(t)
	cfg.Budget = kernelruntime.Budget(t)
	for _, p := range l.opts.SystemPlugins {
		if !slices.Contains(cfg.SystemPlugins, p) {
			cfg.SystemPlugins = append(cfg.SystemPlugins, p)
		}
	}
	if cfg.Executor == "" {
		cfg.Executor = string(smsv1.ExecutorIsolated)
	}
	if l.opts.Executor != "" {
		cfg.Executor = l.opts.Executor
	}
	if d := t.Spec.SandboxIdle; d != nil {
		cfg.SandboxIdle = d.Duration
	}
	cfg.SensitivePoints = nilIfEmpty(t.Spec.Judge.SensitivePoints)
	cfg.SensitiveScopes = nilIfEmpty(t.Spec.Judge.SensitiveScopes)
	if a := t.Spec.Agent; a != nil {
		cfg.Agent = kernelcmd.Agent{Identity: a.Identity, MaxSteps: int(a.MaxSteps)}
	}
	if t.Spec.Users != nil {
		cfg.Users, cfg.NoSessionApprove = true, true
	}
	if t.Spec.Storage.Driver == smsv1.StoragePostgres {
		cfg.Store = spec.PostgresURL
		cfg.Schema = kernelruntime.PostgresSchema(t)
	}
	if o := t.Spec.Objects; o != nil && o.Driver == smsv1.ObjectsFS {
		cfg.Objects = "fs:" + filepath.Join(dir, "objects")
	} else if o != nil {
		cfg.Objects = kernelruntime.ObjectsSpec(t)
	}
	files := []struct {
		name string
		data []byte
		into *string
	}{
		{"admin-token", []byte(spec.AdminToken), &cfg.TokenFile},
		{smsv1.SecretKeyTokenAuth, spec.ChatTokenAuth, &cfg.TokenAuthFile},
		{"model-key", []byte(spec.ModelKey), &cfg.Model.KeyFile},
		{"model-script.json", spec.ModelScript, &cfg.Model.Script},
		{"bootstrap-admin", spec.BootstrapAdmin, &cfg.BootstrapAdminFile},
		{"objects-credentials", spec.ObjectsCredentials, &cfg.ObjectsCredentialsFile},
	}
	for _, f := range files {
		if len(f.data) == 0 {
			continue
		}
		path := filepath.Join(dir, f.name)
		if err := writeIfChanged(path, f.data); err != nil {
			return kernelcmd.Config{}, fmt.Errorf("write %s: %w", f.name, err)
		}
		*f.into = path
	}
	switch m := t.Spec.Model; {
	case m != nil:
		key, script := cfg.Model.KeyFile, cfg.Model.Script
		cfg.Model = kernelruntime.ModelConfig(m)
		cfg.Model.KeyFile, cfg.Model.Script = key, script
	case l.opts.DefaultModel.Provider != "":
		cfg.Model = l.opts.DefaultModel
	default:
		cfg.Model.KeyFile, cfg.Model.Script = "", ""
	}
	return cfg, nil
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// configHash identifies a kernel's configuration, secrets included, so a
// changed secret restarts the kernel.
func configHash(cfg kernelcmd.Config, spec kernelruntime.Spec) string {
	raw, _ := json.Marshal(struct {
		C        kernelcmd.Config
		Checksum string
	}{cfg, spec.Checksum()})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// writeIfChanged writes data to path unless the file holds it already:
// every reconcile of a tenant resolves its configuration, and most find
// it unchanged.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return os.WriteFile(path, data, 0o600)
}
