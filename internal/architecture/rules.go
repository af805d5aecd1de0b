package architecture

import "strings"

// Module is the module path every rule is relative to.
const Module = "github.com/sms-baseline/sms"

// Kind is the role a package plays in the rings.
type Kind int

// Package kinds, by ring.
const (
	Unknown     Kind = iota
	Kernel           // ring 0
	Contract         // ring 1
	Plugin           // ring 2: plugins/* and judge
	Driver           // ring 2: drivers/*
	Baseline         // ring 3
	Root             // ring 4: cmd, controllers, api, test, internal tooling
	Ledger           // island: standard library only
	LedgerStore      // island: the ledger plus its database driver
)

// Ring returns the ring number of a kind; islands and unknowns return -1.
func (k Kind) Ring() int {
	switch k {
	case Kernel:
		return 0
	case Contract:
		return 1
	case Plugin, Driver:
		return 2
	case Baseline:
		return 3
	case Root:
		return 4
	}
	return -1
}

// prefixes maps module-relative path prefixes to kinds; the longest match
// wins. A package outside every prefix is Unknown, and reported.
var prefixes = []struct {
	prefix string
	kind   Kind
}{
	{"kernel", Kernel},
	{"contracts", Contract},
	{"plugins/", Plugin},
	{"judge", Plugin},
	{"drivers/", Driver},
	{"baseline", Baseline},
	{"", Root}, // the module's root package: the files the binaries embed
	{"cmd/", Root},
	{"kernelcmd", Root}, // the public kernel command applications build on
	{"examples/", Root}, // applications built on the public packages
	{"controllers", Root},
	{"api/", Root},
	{"test/", Root},
	{"internal/", Root},
	{"ledger", Ledger},
	{"ledger/pgstore", LedgerStore},
	{"ledger/internal/", LedgerStore}, // test support for the Postgres store
}

// KindOf classifies a package by its import path.
func KindOf(path string) Kind {
	rel, ok := relative(path)
	if !ok {
		return Unknown
	}
	best, kind := -1, Unknown
	for _, p := range prefixes {
		if matches(rel, p.prefix) && len(p.prefix) > best {
			best, kind = len(p.prefix), p.kind
		}
	}
	return kind
}

func matches(rel, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(rel, prefix)
	}
	return rel == prefix || strings.HasPrefix(rel, prefix+"/")
}

// relative returns path relative to Module.
func relative(path string) (string, bool) {
	if path == Module {
		return "", true
	}
	rel, ok := strings.CutPrefix(path, Module+"/")
	return rel, ok
}

// thirdParty lists the outside modules each kind may import, besides the
// standard library. Drivers may import any library except Kubernetes ones:
// wrapping one library is what a driver is for.
var thirdParty = map[Kind][]string{
	Plugin: {
		"github.com/dop251/goja/ast",  // the judge's source lint walks agent code's syntax tree,
		"github.com/dop251/goja/file", // with goja's parser packages (never its runtime)
		"github.com/dop251/goja/parser",
		"github.com/dop251/goja/token",
		"github.com/santhosh-tekuri/jsonschema/v6", // the agent loop validates tool input
	},
	LedgerStore: {"github.com/jackc/pgx/v5"},
}

// thirdPartyByPackage lists outside modules one package may import although
// its kind may not, by module-relative path. The agent-source front end is
// shared by the judge (ring 2) and the executors (ring 2), so it sits in
// ring 1 and reads code with goja's parser; the goja runtime stays out.
// The auth plugin hashes passwords with argon2id, which the standard
// library lacks; the judge shows an approver the diff of a plugin's code
// with go-udiff (the Go tools' diff, exported).
var thirdPartyByPackage = map[string][]string{
	"plugins/auth": {"golang.org/x/crypto/argon2"},
	"judge":        {"github.com/aymanbagabas/go-udiff"},
	"contracts/agentsource": {
		"github.com/dop251/goja/ast",
		"github.com/dop251/goja/file",
		"github.com/dop251/goja/parser",
		"github.com/dop251/goja/token",
	},
}

// allowedDriverImports lists the driver-to-driver imports the table allows.
var allowedDriverImports = []string{
	"drivers/store/sqlstore",            // shared SQL helpers for every store driver
	"drivers/executor/goja",             // the isolated executor runs the same runtime in a child
	"drivers/executor/internal/workers", // the goroutine pool both executors share
	"drivers/model/agentcli",            // the MCP server and process runner of the agent CLI drivers
	"drivers/model/openai",              // gpt-oauth speaks the Responses API through it
}

// family returns the plugin or driver a package belongs to: its first two
// path elements below plugins/ or drivers/ (drivers/store/sqlite), so a
// plugin's own subpackages are not "another plugin".
func family(path string) string {
	rel, _ := relative(path)
	parts := strings.Split(rel, "/")
	switch {
	case parts[0] == "plugins" && len(parts) > 1:
		return strings.Join(parts[:2], "/")
	case parts[0] == "drivers" && len(parts) > 2:
		return strings.Join(parts[:3], "/")
	}
	return parts[0]
}

func isKubernetes(path string) bool {
	return strings.HasPrefix(path, "k8s.io/") || strings.HasPrefix(path, "sigs.k8s.io/")
}
