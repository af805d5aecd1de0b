package baseline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sms-baseline/sms/baseline/budget"
	"github.com/sms-baseline/sms/contracts"
	gojaexec "github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi"
	"github.com/sms-baseline/sms/plugins/agentloop"
	"github.com/sms-baseline/sms/plugins/auth"
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/rbac"
	"github.com/sms-baseline/sms/plugins/scheduler"
)

// DatabasePluginID is the id of the plugin that provides contracts.DatabaseKey.
const DatabasePluginID = "sms.database"

// ModelPluginID is the id of the plugin that provides contracts.ModelKey.
const ModelPluginID = "sms.model"

// Options configure New. Every field is optional.
type Options struct {
	// Name names the kernel in logs and the admin API. Default "kernel".
	Name string
	// Store is where the kernel persists. Default: a private in-memory
	// SQLite database, closed by Close. A given Store is closed by Close too.
	Store contracts.Store
	// Executor runs agent plugins. Default: the in-process goja executor.
	Executor kernel.Executor
	// Policy is the judge's approval policy.
	Policy judge.Policy
	// AgentCapabilities is what a caller without the admin scope may give
	// the plugins it submits (or the chat agent writes for it): the judge
	// refuses a plugin whose declaration needs more. Nil: every
	// capability. Names are contracts.Capabilities (CheckCapabilities).
	AgentCapabilities []string
	// AdminToken is a credential named "admin" holding every scope (read,
	// chat, approve, admin). With it, or any of Credentials, every /api
	// route needs a credential with the route's scope; with neither the
	// API is open.
	AdminToken string
	// Credentials are more bearer tokens, each with its name and scopes.
	Credentials []smshttp.Credential
	// Model is the tenant's model. When set, a plugin provides it under
	// contracts.ModelKey and the chat agent (agentloop) is installed.
	Model contracts.ModelService
	// OnClose, when set, runs once at Close, after the store closes: it
	// releases what the caller made to live as long as the kernel (the
	// processes of a CLI model).
	OnClose func() error
	// ORM configures the ORM plugin; its ContextOf says which user a
	// request or chat turn acts for (the default: anonymous, and only a
	// guard decides).
	ORM orm.Options
	// Auth, when set, gives the kernel users and access control: the auth
	// plugin (users, sessions, /api/auth) and the rbac plugin (groups,
	// access, rules), with the ORM and the collections closed to anyone
	// rbac does not admit, the ORM acting for the request's user
	// (rbac.OpContextOf, unless ORM.ContextOf is set) and its REST API
	// served to users on the application listener too. Without it
	// (local development) the data is open to whoever the credentials
	// admit, and the kernel says so in /api/state and its log.
	Auth *auth.Options
	// Admin configures the admin API: its prefix (default /api) and its
	// stream limits.
	Admin adminapi.Options
	// Agent configures the chat agent when Model is set: its identity
	// (the system prompt's first line), the model calls of a turn, and
	// where transcripts are kept (default: the tenant's database).
	Agent agentloop.Options
	// Objects, when set, is the tenant's object store, provided under
	// contracts.ObjectsKey (system only): the ORM keeps the files of binary
	// fields there. Close does not close it.
	Objects contracts.ObjectStore
	// Services turns on optional system plugins by name (Services lists
	// them: audit, automation, meta, rpc, console); all are off by default.
	// Turning one off keeps its tables.
	Services []string
	// ServiceOptions configure the services that are on.
	ServiceOptions ServiceOptions
	// Plugins are the application's own system plugins, installed last.
	Plugins []kernel.Plugin
	// Logger receives the kernel's and plugins' logs. Default: discarded.
	Logger *slog.Logger
	// Fault is the kernel's fault hook (kernel.Options.Fault), for tests
	// that stop the process at a chosen step of a mount.
	Fault func(point string)
	// SafeMode boots with system plugins only (kernel.Options.SafeMode).
	SafeMode bool
	// QuarantineAfter is kernel.Options.QuarantineAfter.
	QuarantineAfter int
	// Budget is the tenant's budget: its period, prices and limits per
	// tenant, per user and per agent plugin. The zero Budget counts
	// everything and limits nothing; agent work is counted either way.
	Budget budget.Config
}

// Baseline is a running kernel server.
type Baseline struct {
	Kernel *kernel.Kernel
	Store  contracts.Store

	meter *budget.Meter

	closeOnce sync.Once
	closeErr  error
	onClose   func() error
}

// systemPlugins returns the system plugins in install order.
func systemPlugins(opts Options, actAs func(context.Context, string) context.Context, meter *budget.Meter) []kernel.Plugin {
	db := opts.Store.Database()
	plugins := []kernel.Plugin{
		{
			Manifest: kernel.Manifest{ID: DatabasePluginID, Version: "1", Provide: []string{contracts.DatabaseKey},
				Description: "Provides the tenant's database"},
			Activate: func(_ context.Context, c *kernel.Context) error {
				if err := c.Kernel().DefineKey(contracts.DatabaseKey, contracts.DatabaseKeyMeta); err != nil {
					return err
				}
				return c.Provide(contracts.DatabaseKey, contracts.Ambient(db))
			},
		},
		objectsPlugin(opts.Objects),
		budget.Plugin(budget.Options{Meter: meter}),
		smshttp.Plugin(smshttp.Options{Credentials: credentials(opts)}),
		collections.New(collections.Options{RequireGuard: opts.Auth != nil}),
		scheduler.New(scheduler.Options{ActAs: actAs}),
		orm.New(ormOptions(opts, actAs)),
	}
	if opts.Auth != nil {
		plugins = append(plugins, auth.Plugin(*opts.Auth), rbac.Plugin())
	}
	plugins = append(plugins, services(opts, actAs)...)
	plugins = append(plugins,
		judge.New(judge.Options{Executor: opts.Executor, Policy: opts.Policy, Logger: opts.Logger, Grant: grant(opts.AgentCapabilities)}).Plugin())
	if opts.Model != nil {
		agent := opts.Agent
		if agent.Sessions == nil {
			agent.Sessions = agentloop.DatabaseSessions(db)
		}
		plugins = append(plugins, modelPlugin(opts.Model), agentloop.Plugin(agent))
	}
	return append(plugins, adminapi.Plugin(opts.Admin))
}

// ormOptions are opts.ORM with what Auth needs of the ORM.
func ormOptions(opts Options, actAs func(context.Context, string) context.Context) orm.Options {
	o := opts.ORM
	if opts.Auth != nil {
		o.RequireGuard, o.UserREST, o.ActAs = true, true, actAs
		if o.ContextOf == nil {
			o.ContextOf = rbac.OpContextOf
		}
	}
	return o
}

// AdminCredential is the name of the credential Options.AdminToken makes.
const AdminCredential = "admin"

func credentials(opts Options) []smshttp.Credential {
	creds := slices.Clone(opts.Credentials)
	if opts.AdminToken != "" {
		creds = append(creds, smshttp.Credential{Name: AdminCredential, Token: opts.AdminToken, Scopes: smshttp.Scopes})
	}
	return creds
}

// modelPlugin provides m under contracts.ModelKey, a system-only key.
func modelPlugin(m contracts.ModelService) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: ModelPluginID, Version: "1", Provide: []string{contracts.ModelKey},
			Description: "Provides the tenant's model"},
		Activate: func(_ context.Context, c *kernel.Context) error {
			err := c.Kernel().DefineKey(contracts.ModelKey, kernel.KeyMeta{Description: "the tenant's model (contracts.ModelService)",
				MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem,
				Requires: []string{contracts.CapModelComplete}, Reaches: []string{contracts.CapModelComplete}})
			if err != nil {
				return err
			}
			return c.Provide(contracts.ModelKey, m)
		},
	}
}

// New boots a kernel server: it installs the system plugins and opts.Plugins,
// restores agent plugins from the store's event log, and checks that every
// system plugin is active. On error everything New opened is closed.
func New(ctx context.Context, opts Options) (*Baseline, error) {
	if err := CheckServices(opts.Services); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	if err := CheckCapabilities(opts.AgentCapabilities); err != nil {
		return nil, fmt.Errorf("baseline: AgentCapabilities: %w", err)
	}
	if err := opts.Budget.Validate(); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	opened := opts.Store == nil
	if opened {
		st, err := sqlite.OpenStore(ctx, sqlite.Memory)
		if err != nil {
			return nil, fmt.Errorf("baseline: open in-memory store: %w", err)
		}
		opts.Store = st
	}
	if opts.Executor == nil {
		opts.Executor = gojaexec.New(gojaexec.Options{Logger: opts.Logger})
	}
	b := &Baseline{Store: opts.Store, onClose: opts.OnClose, meter: budget.NewMeter(opts.Budget, nil)}
	b.Kernel = kernel.New(kernel.Options{Name: opts.Name, Log: opts.Store.Log(), Blobs: opts.Store.Blobs(),
		Executor: opts.Executor, Logger: opts.Logger, Fault: opts.Fault, SafeMode: opts.SafeMode, QuarantineAfter: opts.QuarantineAfter,
		Meter: b.meter})
	if err := b.boot(ctx, opts); err != nil {
		return nil, errors.Join(err, b.Close())
	}
	return b, nil
}

func (b *Baseline) boot(ctx context.Context, opts Options) error {
	var actAs func(context.Context, string) context.Context
	if opts.Auth != nil {
		actAs = b.actAs
	}
	system := systemPlugins(opts, actAs, b.meter)
	for _, p := range append(system, opts.Plugins...) {
		if err := b.Kernel.Install(p); err != nil {
			return fmt.Errorf("baseline: install %s: %w", p.Manifest.ID, err)
		}
	}
	restoreErr := b.Kernel.Restore(ctx)
	var down []string
	for _, p := range system {
		if v, _ := b.Kernel.Fiber(p.Manifest.ID); v.State != kernel.StateActive {
			down = append(down, fmt.Sprintf("%s (%s%s)", v.ID, v.State, errSuffix(v.Error)))
		}
	}
	if len(down) > 0 {
		return fmt.Errorf("baseline: system plugins not active: %s", strings.Join(down, ", "))
	}
	if restoreErr != nil && opts.Logger != nil {
		opts.Logger.Warn("Some plugins failed to activate on restore", "kernel", b.Kernel.Name(), "error", restoreErr)
	}
	return nil
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

// ServeHTTP serves every route through the http plugin active right now.
func (b *Baseline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v, err := b.Kernel.GetValue(smshttp.Key)
	if err != nil {
		smshttp.WriteError(w, smshttp.NewError(smshttp.KindInternal, "the http plugin is not active"))
		return
	}
	v.(smshttp.Service).ServeHTTP(w, r)
}

// serveApp serves every route but the admin API's, through the http
// plugin active right now: the application listener when the admin API
// has a listener of its own.
func (b *Baseline) serveApp(w http.ResponseWriter, r *http.Request) {
	v, err := b.Kernel.GetValue(smshttp.Key)
	if err != nil {
		smshttp.WriteError(w, smshttp.NewError(smshttp.KindInternal, "the http plugin is not active"))
		return
	}
	v.(smshttp.Service).AppHandler().ServeHTTP(w, r)
}

// Handler returns b as an http.Handler.
func (b *Baseline) Handler() http.Handler { return b }

// Tick runs the scheduler's due jobs at now.
func (b *Baseline) Tick(ctx context.Context, now time.Time) error {
	v, err := b.Kernel.GetValue(scheduler.Key)
	if err != nil {
		return fmt.Errorf("baseline: tick: %w", err)
	}
	return v.(scheduler.Service).Tick(ctx, now)
}

// Close closes the store. It is safe to call more than once.
func (b *Baseline) Close() error {
	b.closeOnce.Do(func() {
		if b.Kernel != nil {
			b.Kernel.Close() // no more restarts of stopped plugins
		}
		b.closeErr = b.meter.Close() // its last counts, before the database closes
		if b.Store != nil {
			b.closeErr = errors.Join(b.closeErr, b.Store.Close())
		}
		if b.onClose != nil {
			b.closeErr = errors.Join(b.closeErr, b.onClose())
		}
	})
	return b.closeErr
}
