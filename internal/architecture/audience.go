package architecture

// Ring 4 is grouped by audience: the operator (internal/operator), the
// public kernel command (kernelcmd), the command-line tools
// (internal/cli), the test infrastructure (internal/testinfra), the API
// types (api) and the binaries (cmd). audienceRules say which of them may
// not import which; the first matching rule decides.
var audienceRules = []struct {
	from, to string
	// allow lists importers (module-relative prefixes) the rule exempts.
	allow  []string
	reason string
}{
	{from: "api/", to: "", reason: "the API types import nothing else from the module"},
	{from: "internal/operator", to: "internal/cli", reason: "the operator does not depend on the command-line tools"},
	{from: "", to: "internal/testinfra/testenv", reason: "only tests use the test infrastructure"},
	{from: "", to: "internal/testinfra/procmem", reason: "only tests use the test infrastructure"},
	{from: "", to: "internal/testinfra/argohealth", reason: "only tests use the test infrastructure"},
	{from: "", to: "internal/testinfra/envtestbin", allow: []string{"internal/testinfra/", "internal/cli/devenv", "cmd/manager"},
		reason: "only tests and manager dev locate the envtest binaries"},
	{from: "internal/operator", to: "internal/testinfra", reason: "the operator does not depend on the test infrastructure"},
	{from: "examples/", to: "internal/", reason: "an example application uses only what an application in a module of its own can import"},
	{from: "examples/", to: "controllers", reason: "an example application uses only the public library, not the operator"},
	{from: "kernelcmd", to: "internal/", reason: "the kernel command is public: applications build their kernels with it, so it knows nothing of the operator, the command-line tools or the module's internals"},
	{from: "internal/operator/webhook", to: "controllers", reason: "the webhooks admit requests; they do not reconcile"},
	{from: "internal/operator/webhook", to: "internal/operator/kernelruntime", reason: "the webhooks never reach a kernel"},
	{from: "controllers", to: "internal/operator/webhook", reason: "controllers do not call the webhooks"},
	{from: "controllers", to: "baseline", reason: "controllers reach kernels through plugins/adminapi/adminv1 only"},
}

// judgeAudience returns why a ring-4 package (module-relative from) may
// not import the module package to, or "".
func judgeAudience(from, to string) string {
	for _, r := range audienceRules {
		if (r.from != "" && !matches(from, r.from)) || (r.to != "" && !matches(to, r.to)) {
			continue
		}
		if r.to == "" && from == to {
			continue
		}
		allowed := false
		for _, a := range r.allow {
			if matches(from, a) {
				allowed = true
			}
		}
		if !allowed {
			return r.reason
		}
	}
	return ""
}
