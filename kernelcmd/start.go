package kernelcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/baseline/budget"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernelcmd/kernelconfig"
	"github.com/sms-baseline/sms/plugins/adminapi"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/agentloop"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// Start opens the kernel c describes: it reads the admin token, builds the
// executor and the model, opens the store and boots the system plugins.
// Empty Listen, Store, Name and Executor take their Defaults, as they do on
// the command line, where Args leaves them out. Errors name the flag to fix.
// On error nothing stays open; on success the caller closes the kernel.
// A nil logger discards the kernel's logs. It is App{}.Start: the kernel
// of `manager kernel`, with no application plugins.
func Start(ctx context.Context, c Config, logger *slog.Logger) (*baseline.Baseline, error) {
	return start(ctx, c, nil, logger)
}

func start(ctx context.Context, c Config, plugins []kernel.Plugin, logger *slog.Logger) (*baseline.Baseline, error) {
	c = c.WithDefaults()
	token, err := readToken(c.TokenFile)
	if err != nil {
		return nil, err
	}
	var creds []smshttp.Credential
	if c.TokenAuthFile != "" {
		if creds, err = ReadTokenAuthFile(c.TokenAuthFile); err != nil {
			return nil, err
		}
	}
	users, err := authOptions(c)
	if err != nil {
		return nil, err
	}
	if err := baseline.CheckServices(c.SystemPlugins); err != nil {
		return nil, fmt.Errorf("--system-plugins: %w", err)
	}
	tenant, err := parseTenant(c.Tenant)
	if err != nil {
		return nil, err
	}
	if n := c.Agent.MaxSteps; n < 0 || n > kernelconfig.MaxAgentSteps {
		return nil, fmt.Errorf("--agent-max-steps %d: want 1 to %d, or 0 for the default", n, kernelconfig.MaxAgentSteps)
	}
	if err := baseline.CheckCapabilities(c.AgentCapabilities); err != nil {
		return nil, fmt.Errorf("--agent-capabilities: %w", err)
	}
	if n := c.QuarantineAfter; n < 0 || n > kernelconfig.MaxQuarantineAfter {
		return nil, fmt.Errorf("--quarantine-after %d: want 1 to %d, or 0 for the default", n, kernelconfig.MaxQuarantineAfter)
	}
	policy := judge.Policy{AutoApprove: c.AutoApprove, SensitivePoints: c.SensitivePoints, SensitiveScopes: c.SensitiveScopes,
		RequiredApprovers: c.Approvers, ApproverGroups: c.ApproverGroups}
	if err := judge.ValidatePolicyQuorum(policy); err != nil {
		return nil, fmt.Errorf("--approvers, --approver-groups: %w", err)
	}
	var budgetCfg budget.Config
	if c.Budget != "" {
		if budgetCfg, err = budget.ParseConfig([]byte(c.Budget)); err != nil {
			return nil, fmt.Errorf("--budget: %w", err)
		}
	}
	exec, err := newExecutor(c, logger)
	if err != nil {
		return nil, err
	}
	model, err := newModel(c.Model)
	if err != nil {
		return nil, err
	}
	objects, err := openObjects(ctx, c.Objects, c.ObjectsCredentialsFile)
	if err != nil {
		return nil, err
	}
	// The store opens last: everything above fails without leaving it open.
	st, err := baseline.OpenStore(ctx, c.Store, c.Schema)
	if err != nil {
		return nil, fmt.Errorf("--store: %w", err)
	}
	b, err := baseline.New(ctx, baseline.Options{Name: c.Name, Store: st, Executor: exec, AdminToken: token, Credentials: creds,
		Logger: logger, Model: model, OnClose: closeModel(model), Fault: faultHook(), SafeMode: c.SafeMode, QuarantineAfter: c.QuarantineAfter,
		AgentCapabilities: c.AgentCapabilities, Auth: users, Plugins: plugins, Services: c.SystemPlugins, Objects: objects,
		Agent:  agentloop.Options{Identity: c.Agent.Identity, MaxSteps: c.Agent.MaxSteps},
		Policy: policy, Budget: budgetCfg,
		Admin: adminapi.Options{Tenant: tenant}})
	if err != nil {
		return nil, err // New closed the store
	}
	return b, nil
}

// Run starts the kernel c describes and serves it on ln until ctx is done,
// then lets in-flight requests finish and closes the kernel. A nil ln
// listens on c.Listen. Run owns ln: it is closed when Run returns.
// A nil logger discards the logs. It is App{}.Run.
func Run(ctx context.Context, c Config, ln net.Listener, logger *slog.Logger) error {
	return run(ctx, c, runOptions{ln: ln, logger: logger})
}

// runOptions are Run's arguments past the settings.
type runOptions struct {
	ln      net.Listener
	logger  *slog.Logger
	plugins []kernel.Plugin
}

func run(ctx context.Context, c Config, o runOptions) error {
	ln, logger := o.ln, o.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c = c.WithDefaults()
	var b *baseline.Baseline
	err := checkServe(c)
	if err == nil {
		b, err = start(ctx, c, o.plugins, logger)
	}
	if err != nil {
		if ln != nil {
			err = errors.Join(err, ln.Close())
		}
		return err
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", c.Listen); err != nil {
			return errors.Join(fmt.Errorf("--listen: %w", err), b.Close())
		}
	}
	var admin net.Listener
	if c.AdminListen != "" {
		if admin, err = net.Listen("tcp", c.AdminListen); err != nil {
			return errors.Join(fmt.Errorf("--admin-listen: %w", err), ln.Close(), b.Close())
		}
		logger.Info("Admin API serving on its own listener", "kernel", c.Name, "addr", admin.Addr().String())
	}
	logger.Info("Kernel serving", "kernel", c.Name, "addr", ln.Addr().String(), "store", redact(c.Store),
		"executor", c.Executor, "auth", map[bool]string{true: "token", false: "open"}[c.TokenFile != "" || c.TokenAuthFile != ""],
		"users", map[bool]string{true: "on", false: "off: no users, data open to whoever the credentials admit"}[c.Users || c.BootstrapAdminFile != ""])
	err = b.Serve(ctx, ln, baseline.ServeOptions{Admin: admin, MaxConnections: c.MaxConnections,
		MaxConnectionsPerAddress: c.MaxConnectionsPerAddress})
	logger.Info("Kernel stopped", "kernel", c.Name)
	return errors.Join(err, b.Close())
}

// checkServe checks the fields only Run uses.
func checkServe(c Config) error {
	if c.MaxConnections < 0 {
		return fmt.Errorf("--max-connections %d: want a positive number, or 0 for the default", c.MaxConnections)
	}
	if c.MaxConnectionsPerAddress < 0 {
		return fmt.Errorf("--max-connections-per-address %d: want a positive number, or 0 for the default", c.MaxConnectionsPerAddress)
	}
	return nil
}

// readToken reads the admin token from path; an empty path means none.
func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--admin-token-file: read admin token: %w", err)
	}
	token := strings.TrimSpace(string(raw))
	if token == "" {
		return "", fmt.Errorf("--admin-token-file: read admin token: %s is empty", path)
	}
	return token, nil
}

// newExecutor returns the executor of Executors that name chooses.
func newExecutor(c Config, logger *slog.Logger) (kernel.Executor, error) {
	name := c.Executor
	d, err := Executors.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("--executor %q: want %s", name, Executors.Choices())
	}
	exec, err := d.Open(contracts.ExecutorSettings{Logger: logger, IdleAfter: c.SandboxIdle})
	if err != nil {
		return nil, fmt.Errorf("--executor %s: %w", name, err)
	}
	return exec, nil
}

// redact hides a password in a store URL for logs.
func redact(spec string) string {
	if i := strings.Index(spec, "@"); i > 0 && strings.Contains(spec[:i], "://") {
		scheme, _, _ := strings.Cut(spec, "://")
		return scheme + "://…@" + spec[i+1:]
	}
	return spec
}

// parseTenant reads --tenant NAMESPACE/NAME; empty is no tenant.
func parseTenant(s string) (*adminv1.TenantRef, error) {
	if s == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(s, "/")
	if !ok || !dnsLabel(ns) || !dnsLabel(name) {
		return nil, fmt.Errorf("--tenant %q: want NAMESPACE/NAME, both lowercase DNS labels", s)
	}
	return &adminv1.TenantRef{Namespace: ns, Name: name}, nil
}

// dnsLabel reports whether s is a DNS label: 1 to 63 of a-z, 0-9 and -,
// starting and ending with a letter or digit.
func dnsLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}
