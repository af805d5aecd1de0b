package kernelconfig

import (
	"strconv"
	"strings"
	"time"
)

// The files a kernel reads when a credential flag names a directory (a
// mounted Secret): --bootstrap-admin-file's login and password, and
// --objects-credentials-file's S3 keys. The kernel owns these names; a
// pod mounts each Secret key under them.
const (
	FileLogin     = "login"
	FilePassword  = "password"
	FileAccessKey = "accessKey"
	FileSecretKey = "secretKey"
)

// Config is everything `manager kernel` is told on its command line. The
// kubernetes runtime turns it into a container's arguments with Args; the
// local runtime and the command itself open a kernel from it with
// kernelcmd.Start.
type Config struct {
	// Listen is the address to serve HTTP on.
	Listen string
	// Store is sqlite:PATH or a postgres:// URL: a spec of a driver of
	// kernelcmd.Stores.
	Store string
	// Schema is the tenant's Postgres schema (postgres stores only).
	Schema string
	// Name names the kernel in logs and the admin API.
	Name string
	// Tenant is NAMESPACE/NAME of the Tenant the kernel runs for, set by
	// the operator: the admin API then says, for each approval, which
	// Approval object decides it.
	Tenant string
	// TokenFile holds the admin bearer token: a credential named admin with
	// every scope. With neither it nor TokenAuthFile the admin API is open.
	TokenFile string
	// TokenAuthFile holds more credentials, one `token,name,"scopes"` line each.
	TokenAuthFile string
	// AdminListen, when set, serves the admin API on its own address; Listen
	// then serves the application's routes only.
	AdminListen string
	// MaxConnections bounds the connections each listener holds at once
	// (baseline.ServeOptions.MaxConnections); zero takes its default.
	MaxConnections int
	// MaxConnectionsPerAddress bounds the connections one client holds at
	// once on each listener (baseline.ServeOptions.MaxConnectionsPerAddress);
	// zero takes its default.
	MaxConnectionsPerAddress int
	// Executor names a driver of kernelcmd.Executors: isolated or goja.
	Executor string
	// SandboxIdle is how long an agent plugin's sandbox process lives
	// without a call (isolated executor): zero takes the executor's
	// default, negative keeps every process while its plugin is mounted.
	SandboxIdle time.Duration
	// Model chooses the chat agent's model; a zero Model means none.
	Model Model
	// Agent configures the chat agent when there is a model.
	Agent Agent
	// Users turns on application users and access control (the auth and
	// rbac plugins); BootstrapAdminFile implies it.
	Users bool
	// BootstrapAdminFile holds the first admin: the login on its first
	// line, the password on its second. It is read at every boot, but a
	// user with that login is never changed: a second boot does not reset
	// a changed password.
	BootstrapAdminFile string
	// NoSessionApprove keeps the approve scope from every user session
	// (the operator's kernels: decisions come through Approval objects).
	NoSessionApprove bool
	// SecureCookie marks the session cookie Secure on plain HTTP too, for
	// a kernel behind a proxy that terminates TLS.
	SecureCookie bool
	// AutoApprove mounts sensitive plugins without a human.
	AutoApprove bool
	// SafeMode boots with system plugins only (kernel.Options.SafeMode).
	SafeMode bool
	// AgentCapabilities is what a caller without the admin scope may give
	// the plugins it submits (baseline.Options.AgentCapabilities); nil:
	// every capability.
	AgentCapabilities []string
	// QuarantineAfter is how many activations of an agent plugin may fail
	// in a row before it is quarantined; 0: kernel.DefaultQuarantineAfter.
	QuarantineAfter int
	// Approvers is how many distinct people must approve a sensitive
	// plugin (judge.Policy.RequiredApprovers; 0: one), and ApproverGroups
	// the groups they must come from (none: any).
	Approvers      int
	ApproverGroups []string
	// Budget is the tenant's budget as JSON (baseline/budget.Config:
	// period, currency, prices, stepEstimateMinor, limits); empty: count
	// everything, limit nothing.
	Budget string
	// SensitivePoints and SensitiveScopes replace the judge's defaults
	// when not nil.
	SensitivePoints []string
	SensitiveScopes []string
	// SystemPlugins turns optional system plugins on by name
	// (baseline.Services: audit, automation, meta, rpc, console).
	SystemPlugins []string
	// Objects is the object store for files: memory, fs:PATH or
	// s3://BUCKET?endpoint=...&region=...&prefix=...; empty for none.
	Objects string
	// ObjectsCredentialsFile holds an S3 store's access key and secret
	// key, one per line.
	ObjectsCredentialsFile string
}

// Model chooses the chat agent's model.
type Model struct {
	// Provider names a driver of kernelcmd.Models: scripted, anthropic,
	// openai or openaicompat.
	Provider string
	// Name is the provider's model name.
	Name string
	// BaseURL overrides the provider's endpoint.
	BaseURL string
	// Script is the scripted model's JSON file.
	Script string
	// KeyFile holds the API key; empty reads the provider's variables.
	KeyFile string
	// Effort is how hard the model reasons; empty: the provider's.
	Effort string
	// ThinkingBudget is the most tokens the model reasons with; zero:
	// the provider's.
	ThinkingBudget int
	// AppName and SiteURL name the application to providers that
	// attribute traffic (OpenRouter).
	AppName string
	SiteURL string
	// AllowUnofficial allows an unofficial driver (gpt-oauth); the
	// operator never sets it.
	AllowUnofficial bool
}

// Agent configures the chat agent.
type Agent struct {
	// Identity is the first line of its system prompt; empty takes the
	// agent loop's own.
	Identity string
	// MaxSteps caps the model calls of one turn; zero takes the agent
	// loop's default.
	MaxSteps int
}

// MaxAgentSteps is the most model calls a turn may be allowed.
const MaxAgentSteps = 64

// MaxQuarantineAfter is the largest QuarantineAfter a kernel accepts.
const MaxQuarantineAfter = 100

// Defaults are the flag defaults of `manager kernel`.
var Defaults = Config{
	Listen:   "127.0.0.1:8787",
	Store:    "sqlite:./sms-data/kernel.db",
	Name:     "kernel",
	Executor: "isolated",
}

// Args returns the `manager kernel` arguments that configure c, starting
// with "kernel". Fields equal to their defaults are left out.
func (c Config) Args() []string {
	args := []string{"kernel"}
	add := func(flag, value, def string) {
		if value != "" && value != def {
			args = append(args, "--"+flag+"="+value)
		}
	}
	add("listen", c.Listen, Defaults.Listen)
	add("store", c.Store, Defaults.Store)
	add("schema", c.Schema, "")
	add("name", c.Name, Defaults.Name)
	add("tenant", c.Tenant, "")
	add("admin-token-file", c.TokenFile, "")
	add("token-auth-file", c.TokenAuthFile, "")
	add("admin-listen", c.AdminListen, "")
	if c.MaxConnections != 0 {
		args = append(args, "--max-connections="+strconv.Itoa(c.MaxConnections))
	}
	if c.MaxConnectionsPerAddress != 0 {
		args = append(args, "--max-connections-per-address="+strconv.Itoa(c.MaxConnectionsPerAddress))
	}
	add("executor", c.Executor, Defaults.Executor)
	if c.SandboxIdle != 0 {
		args = append(args, "--sandbox-idle="+c.SandboxIdle.String())
	}
	add("bootstrap-admin-file", c.BootstrapAdminFile, "")
	add("model", c.Model.Provider, "")
	add("model-name", c.Model.Name, "")
	add("model-base-url", c.Model.BaseURL, "")
	add("model-script", c.Model.Script, "")
	add("model-key-file", c.Model.KeyFile, "")
	add("model-effort", c.Model.Effort, "")
	if c.Model.ThinkingBudget != 0 {
		args = append(args, "--model-thinking-budget="+strconv.Itoa(c.Model.ThinkingBudget))
	}
	add("model-app-name", c.Model.AppName, "")
	add("model-site-url", c.Model.SiteURL, "")
	add("agent-identity", c.Agent.Identity, "")
	if c.Agent.MaxSteps != 0 {
		args = append(args, "--agent-max-steps="+strconv.Itoa(c.Agent.MaxSteps))
	}
	if c.QuarantineAfter != 0 {
		args = append(args, "--quarantine-after="+strconv.Itoa(c.QuarantineAfter))
	}
	if c.Approvers != 0 {
		args = append(args, "--approvers="+strconv.Itoa(c.Approvers))
	}
	if c.ApproverGroups != nil {
		args = append(args, "--approver-groups="+strings.Join(c.ApproverGroups, ","))
	}
	add("budget", c.Budget, "")
	for _, b := range []struct {
		on   bool
		flag string
	}{{c.Model.AllowUnofficial, "--allow-unofficial-gpt-oauth"}, {c.Users, "--users"}, {c.NoSessionApprove, "--no-session-approve"}, {c.SecureCookie, "--secure-cookie"}, {c.AutoApprove, "--auto-approve"}, {c.SafeMode, "--safe-mode"}} {
		if b.on {
			args = append(args, b.flag)
		}
	}
	if c.SensitivePoints != nil {
		args = append(args, "--sensitive-points="+strings.Join(c.SensitivePoints, ","))
	}
	if c.SensitiveScopes != nil {
		args = append(args, "--sensitive-scopes="+strings.Join(c.SensitiveScopes, ","))
	}
	if c.AgentCapabilities != nil {
		args = append(args, "--agent-capabilities="+strings.Join(c.AgentCapabilities, ","))
	}
	if len(c.SystemPlugins) > 0 {
		args = append(args, "--system-plugins="+strings.Join(c.SystemPlugins, ","))
	}
	add("objects", c.Objects, "")
	add("objects-credentials-file", c.ObjectsCredentialsFile, "")
	return args
}

// WithDefaults fills the empty fields that have a default, so a Config
// means to kernelcmd.Start what its Args mean to the command.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = Defaults.Listen
	}
	if c.Store == "" {
		c.Store = Defaults.Store
	}
	if c.Name == "" {
		c.Name = Defaults.Name
	}
	if c.Executor == "" {
		c.Executor = Defaults.Executor
	}
	return c
}
