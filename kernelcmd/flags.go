package kernelcmd

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernelcmd/kernelconfig"
	"github.com/sms-baseline/sms/plugins/agentloop"
)

// BindFlags registers the flags of `manager kernel` on fs, each bound to
// its field of c, and sets c to Defaults. Args writes exactly these flags,
// so parsing c.Args()[1:] into a bound Config yields c again.
func BindFlags(fs *pflag.FlagSet, c *Config) {
	fs.StringVar(&c.Listen, "listen", Defaults.Listen, "address to serve HTTP on")
	fs.StringVar(&c.Store, "store", Defaults.Store, baseline.StoreForms())
	fs.StringVar(&c.Schema, "schema", Defaults.Schema, "Postgres schema of this tenant (default public)")
	fs.StringVar(&c.Name, "name", Defaults.Name, "name of the kernel in logs and the admin API")
	fs.StringVar(&c.Tenant, "tenant", Defaults.Tenant, "NAMESPACE/NAME of the Tenant this kernel runs for (set by the operator): approvals name the Approval object that decides them")
	fs.StringVar(&c.TokenFile, "admin-token-file", Defaults.TokenFile, "file holding the admin bearer token, which has every scope (default: admin API open)")
	fs.StringVar(&c.TokenAuthFile, "token-auth-file", Defaults.TokenAuthFile, `file of scoped credentials, one token,name,"read,chat,approve,admin" line each`)
	fs.StringVar(&c.AdminListen, "admin-listen", Defaults.AdminListen, "serve the admin API on this address of its own; --listen then serves the application's routes only")
	fs.IntVar(&c.MaxConnections, "max-connections", Defaults.MaxConnections, "connections each listener holds at once; past it new ones wait until one closes (default "+strconv.Itoa(baseline.DefaultMaxConnections)+")")
	fs.IntVar(&c.MaxConnectionsPerAddress, "max-connections-per-address", Defaults.MaxConnectionsPerAddress, "connections one client address holds at once on each listener; past it its new ones are closed at once, so one client cannot keep the probes waiting (default "+strconv.Itoa(baseline.DefaultMaxConnectionsPerAddress)+")")
	fs.StringVar(&c.Executor, "executor", Defaults.Executor, "where agent code runs: "+Executors.Help())
	fs.DurationVar(&c.SandboxIdle, "sandbox-idle", Defaults.SandboxIdle, "how long an agent plugin's sandbox process lives without a call before it exits; its next call starts one again (isolated executor; negative: never exit; default "+isolated.DefaultIdleAfter.String()+")")
	fs.StringVar(&c.Model.Provider, "model", Defaults.Model.Provider, "the chat agent's model: "+Models.Help()+" (default: no chat agent)")
	fs.StringVar(&c.Model.Name, "model-name", Defaults.Model.Name, "the provider's model name")
	fs.StringVar(&c.Model.BaseURL, "model-base-url", Defaults.Model.BaseURL, "the provider's base URL"+baseURLNeeds())
	fs.StringVar(&c.Model.Script, "model-script", Defaults.Model.Script, "JSON file of turns for --model scripted")
	fs.StringVar(&c.Model.Effort, "model-effort", Defaults.Model.Effort, "how hard the model reasons, where its driver takes it: "+effortHelp()+" (default: the provider's)")
	fs.IntVar(&c.Model.ThinkingBudget, "model-thinking-budget", Defaults.Model.ThinkingBudget, "the most tokens the model reasons with, where its driver takes it ("+budgetHelp()+"; default: the provider's)")
	fs.StringVar(&c.Model.AppName, "model-app-name", Defaults.Model.AppName, "the application's name, sent to providers that attribute traffic (OpenRouter's X-Title)")
	fs.StringVar(&c.Model.SiteURL, "model-site-url", Defaults.Model.SiteURL, "the application's URL, sent to providers that attribute traffic (OpenRouter's HTTP-Referer)")
	fs.BoolVar(&c.Model.AllowUnofficial, "allow-unofficial-gpt-oauth", Defaults.Model.AllowUnofficial, "allow --model gpt-oauth: ChatGPT's undocumented Codex backend with codex login's tokens, for your own kernel only, never a service others use")
	fs.StringVar(&c.Model.KeyFile, "model-key-file", Defaults.Model.KeyFile, "file holding the model key (default: "+contracts.OrList(ModelKeyEnv())+"); for gpt-oauth, codex login's auth.json (default $CODEX_HOME/auth.json or ~/.codex/auth.json)")
	fs.StringVar(&c.Agent.Identity, "agent-identity", Defaults.Agent.Identity, "the first line of the chat agent's system prompt: who it is for this application (default: the agent loop's own)")
	fs.IntVar(&c.Agent.MaxSteps, "agent-max-steps", Defaults.Agent.MaxSteps, "model calls one chat turn may make, at most "+strconv.Itoa(kernelconfig.MaxAgentSteps)+" (default "+strconv.Itoa(agentloop.DefaultMaxSteps)+")")
	fs.BoolVar(&c.Users, "users", Defaults.Users, "turn on application users and access control: sessions under /api/auth, groups and record rules (default: off, data open to whoever the credentials admit)")
	fs.StringVar(&c.BootstrapAdminFile, "bootstrap-admin-file", Defaults.BootstrapAdminFile, "file of the first admin: the login on its first line, the password on its second; created once, never reset (implies --users)")
	fs.BoolVar(&c.NoSessionApprove, "no-session-approve", Defaults.NoSessionApprove, "no user session carries the approve scope, admins' included (set by the operator: decisions come through Approval objects)")
	fs.BoolVar(&c.SecureCookie, "secure-cookie", Defaults.SecureCookie, "mark the session cookie Secure on plain HTTP too (behind a proxy that terminates TLS)")
	fs.BoolVar(&c.AutoApprove, "auto-approve", Defaults.AutoApprove, "mount sensitive plugins without a human (taints the kernel)")
	fs.StringSliceVar(&c.AgentCapabilities, "agent-capabilities", Defaults.AgentCapabilities, "capabilities a caller without the admin scope may give the plugins it submits or the chat agent writes for it: "+capabilityHelp()+" (default: all)")
	fs.BoolVar(&c.SafeMode, "safe-mode", Defaults.SafeMode, "boot with system plugins only: agent plugins stay in the log, listed and inactive, and none can be mounted; restart without it to bring them back")
	fs.IntVar(&c.QuarantineAfter, "quarantine-after", Defaults.QuarantineAfter, "activations of an agent plugin that may fail in a row (or stop the kernel) before it is quarantined, at most "+strconv.Itoa(kernelconfig.MaxQuarantineAfter)+" (default "+strconv.Itoa(kernel.DefaultQuarantineAfter)+")")
	fs.IntVar(&c.Approvers, "approvers", Defaults.Approvers, "distinct people who must approve a sensitive plugin, never its requester when more than one, at most "+strconv.Itoa(judge.MaxRequiredApprovers)+" (default 1)")
	fs.StringSliceVar(&c.ApproverGroups, "approver-groups", Defaults.ApproverGroups, "groups an approver must be in (relayed with each decision by an admin credential, as the operator does); the requester's approval never counts (default: any)")
	fs.StringVar(&c.Budget, "budget", Defaults.Budget, `the tenant's budget as JSON: {"period":"day|month","currency":"USD","prices":{"inputPerMTokMinor":N,"outputPerMTokMinor":N},"stepEstimateMinor":N,"limits":{"tenant":{...},"user":{...},"plugin":{...}}}, each limit {"tokens","costMinor","wallMillis","rows"} (default: count, limit nothing)`)
	fs.StringSliceVar(&c.SensitivePoints, "sensitive-points", Defaults.SensitivePoints, "points whose contributions need approval (default "+strings.Join(judge.DefaultSensitivePoints, ",")+")")
	fs.StringSliceVar(&c.SensitiveScopes, "sensitive-scopes", Defaults.SensitiveScopes, "scopes that need approval (default "+strings.Join(judge.DefaultSensitiveScopes, ",")+")")
	fs.StringVar(&c.Objects, "objects", Defaults.Objects, ObjectsForms)
	fs.StringVar(&c.ObjectsCredentialsFile, "objects-credentials-file", Defaults.ObjectsCredentialsFile, "file of an S3 object store's access key (first line) and secret key (second line)")
	fs.StringSliceVar(&c.SystemPlugins, "system-plugins", Defaults.SystemPlugins, "optional system plugins to turn on: "+strings.Join(baseline.Services, ", ")+" (default none)")
}

// capabilityHelp lists the capabilities a requester may grant.
func capabilityHelp() string {
	var names []string
	for _, c := range contracts.Capabilities {
		if !c.System {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ", ")
}

// effortHelp lists each model's efforts, for --model-effort's help.
func effortHelp() string {
	var parts []string
	for _, d := range Models.All() {
		if len(d.Efforts) > 0 {
			parts = append(parts, d.Name+" "+strings.Join(d.Efforts, "|"))
		}
	}
	return strings.Join(parts, "; ")
}

// budgetHelp lists the models that take a thinking budget.
func budgetHelp() string {
	var names []string
	for _, d := range Models.All() {
		if d.ThinkingBudget {
			names = append(names, d.Name)
		}
	}
	return contracts.OrList(names)
}

// baseURLNeeds says which models need --model-base-url, for its help:
// " (required for openaicompat)", or "" when none does.
func baseURLNeeds() string {
	var names []string
	for _, d := range Models.All() {
		for _, need := range d.Needs {
			if need.Setting == contracts.ModelBaseURL {
				names = append(names, d.Name)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (required for " + contracts.OrList(names) + ")"
}
