package architecture

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestArchitecture checks every import of the module against the rings.
func TestArchitecture(t *testing.T) {
	pkgs, err := Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	var own int
	for _, p := range pkgs {
		if _, ok := relative(p.ImportPath); ok {
			own++
		}
	}
	if own < 3 {
		t.Fatalf("go list found %d module packages; the check would prove nothing", own)
	}
	violations, err := Check(pkgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Errorf("%s", v)
	}
}

// TestKernelIsStandardLibraryOnly states the ring-0 rule on its own, on the
// real kernel package: every import is standard.
func TestKernelIsStandardLibraryOnly(t *testing.T) {
	pkgs, err := Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	std := map[string]bool{}
	for _, p := range pkgs {
		std[p.ImportPath] = p.Standard
	}
	found := false
	for _, p := range pkgs {
		if p.ImportPath != Module+"/kernel" {
			continue
		}
		found = true
		for _, imp := range p.Imports {
			if !std[imp] {
				t.Errorf("kernel imports %s, which is not in the standard library", imp)
			}
		}
	}
	if !found {
		t.Fatal("the kernel package was not listed")
	}
}

func mod(rel string, imports ...string) Package {
	return Package{ImportPath: Module + "/" + rel, Imports: imports}
}

// linked is package rel importing imp, which depends on dep.
func linked(rel, imp, dep string) Package {
	return Package{ImportPath: Module + "/" + rel, Imports: []string{imp}, Deps: []string{imp, dep}}
}

// The checker bites: each rule of the table, broken once, is reported
// naming the import. The kernel-free cases were seen failing with
// linksKernel returning nil, and the adminv1 cases with the standardOnly
// check taken out of judge. Seen failing with each case of judge returning "",
// and the audience cases with Root packages let through by the
// same-family shortcut (every internal/ package is one family), and with
// contracts/agentsource's goja allowance granted to every package (another
// contract importing goja's parser was let through).
func TestCheckReportsViolations(t *testing.T) {
	stdPkgs := []Package{{ImportPath: "fmt", Standard: true}, {ImportPath: "net/http", Standard: true}}
	cases := []struct {
		name string
		pkg  Package
		want string // substring of the violation; "" means none
	}{
		{"kernel imports contracts", mod("kernel", Module+"/contracts"), "kernel imports " + Module + "/contracts"},
		{"kernel imports third party", mod("kernel", "github.com/x/y"), "standard library only"},
		{"kernel imports std", mod("kernel", "fmt"), ""},
		{"contracts imports plugin", mod("contracts", Module+"/plugins/http"), "ring 1"},
		{"plugin imports driver", mod("plugins/http", Module+"/drivers/store/sqlite"), "a plugin imports only"},
		{"plugin imports k8s", mod("judge", "k8s.io/client-go"), "third-party"},
		{"judge imports goja", mod("judge", "github.com/dop251/goja/parser"), ""},
		{"judge imports goja's runtime", mod("judge", "github.com/dop251/goja"), "third-party"},
		{"agentsource imports goja's parser", mod("contracts/agentsource", "github.com/dop251/goja/parser", "github.com/dop251/goja/ast"), ""},
		{"agentsource imports goja's runtime", mod("contracts/agentsource", "github.com/dop251/goja"), "standard library only"},
		{"another contract imports goja's parser", mod("contracts/storetest", "github.com/dop251/goja/parser"), "standard library only"},
		{"driver imports plugin", mod("drivers/store/sqlite", Module+"/plugins/http"), "a driver imports only"},
		{"driver imports driver", mod("drivers/store/sqlite", Module+"/drivers/store/postgres"), "a driver imports only"},
		{"driver imports sqlstore", mod("drivers/store/sqlite", Module+"/drivers/store/sqlstore"), ""},
		{"driver imports k8s", mod("drivers/model/openai", "sigs.k8s.io/yaml"), "Kubernetes"},
		{"baseline imports controllers", mod("baseline", Module+"/controllers"), "ring 3"},
		{"ledger imports kernel", mod("ledger", Module+"/kernel"), "island"},
		{"ledger imports its store", mod("ledger", Module+"/ledger/pgstore"), "island"},
		{"ledger imports pgx", mod("ledger", "github.com/jackc/pgx/v5"), "standard library only"},
		{"pgstore imports pgx", mod("ledger/pgstore", "github.com/jackc/pgx/v5/pgconn"), ""},
		{"unknown package", mod("misc"), "has no ring"},
		{"cmd imports anything", mod("cmd/manager", Module+"/internal/operator", "k8s.io/api"), ""},
		{"api imports the module", mod("api/v1", Module+"/kernel"), "the API types import nothing"},
		{"operator imports a CLI", mod("internal/operator", Module+"/internal/cli/smsctl"), "command-line tools"},
		{"operator imports testinfra", mod("controllers", Module+"/internal/testinfra/testenv"), "only tests"},
		{"devenv locates envtest", mod("internal/cli/devenv", Module+"/internal/testinfra/envtestbin"), ""},
		{"kernelruntime locates envtest", mod("internal/operator/kernelruntime", Module+"/internal/testinfra/envtestbin"), "only tests and manager dev"},
		{"kernelcmd imports the operator", mod("kernelcmd", Module+"/internal/operator/kernelruntime"), "knows nothing of the operator"},
		{"an example imports an internal package", mod("examples/erp", Module+"/internal/cli/smsctl"), "module of its own"},
		{"kernelcmd imports an internal package", mod("kernelcmd", Module+"/internal/cli/smsctl"), "kernel command is public"},
		{"webhook imports controllers", mod("internal/operator/webhook", Module+"/controllers"), "admit requests"},
		{"controllers import baseline", mod("controllers", Module+"/baseline"), "adminv1 only"},
		{"controllers import adminv1", mod("controllers", Module+"/plugins/adminapi/adminv1", Module+"/internal/operator/kernelruntime"), ""},
		{"adminv1 imports the kernel", mod("plugins/adminapi/adminv1", Module+"/kernel"), "wire contract imports the standard library only"},
		{"adminv1 imports a library", mod("plugins/adminapi/adminv1", "github.com/x/y"), "wire contract imports the standard library only"},
		{"adminv1 imports std", mod("plugins/adminapi/adminv1", "net/http"), ""},
		{"controllers import the judge", mod("controllers", Module+"/judge"), "links the kernel"},
		{"smsctl imports the kernel", mod("internal/cli/smsctl", Module+"/kernel"), "links the kernel"},
		{"kernelruntime imports goja", mod("internal/operator/kernelruntime", "github.com/dop251/goja/parser"), "links the kernel"},
		{"controllers link the kernel", linked("controllers", Module+"/internal/operator/kernelruntime", Module+"/kernel"), "links the kernel"},
		{"kubectl-sms links the judge", linked("cmd/kubectl-sms", Module+"/internal/cli/smsctl", Module+"/judge"), "links the kernel"},
		{"the local runtime links the kernel", linked("internal/operator/kernelruntime/local", Module+"/baseline", Module+"/kernel"), ""},
		{"devenv links the kernel", linked("internal/cli/devenv", Module+"/internal/operator", Module+"/kernel"), ""},
		{"manager links the kernel", linked("cmd/manager", Module+"/internal/operator", Module+"/kernel"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(append([]Package{tc.pkg}, stdPkgs...))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("violations = %v, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].String(), tc.want) {
				t.Fatalf("violations = %v, want one mentioning %q", got, tc.want)
			}
		})
	}
}

// A plugin may use another plugin only through identifiers declared in its
// contract.go. Seen failing with the allowed[id] check removed.
func TestContractIdentifiersOnly(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, src string) {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("http/contract.go", "package http\n\nconst Key = \"http\"\n\ntype Route struct{}\n")
	write("http/server.go", "package http\n\nfunc NewServer() {}\n")
	write("good/good.go", "package good\n\nimport h \""+Module+"/plugins/http\"\n\nvar _ = h.Key\nvar _ h.Route\n")
	write("bad/bad.go", "package bad\n\nimport \""+Module+"/plugins/http\"\n\nvar _ = http.Key\nvar f = http.NewServer\n")
	httpPkg := Package{ImportPath: Module + "/plugins/http", Dir: filepath.Join(dir, "http"), GoFiles: []string{"contract.go", "server.go"}}
	good := Package{ImportPath: Module + "/plugins/good", Dir: filepath.Join(dir, "good"), GoFiles: []string{"good.go"}, Imports: []string{httpPkg.ImportPath}}
	bad := Package{ImportPath: Module + "/plugins/bad", Dir: filepath.Join(dir, "bad"), GoFiles: []string{"bad.go"}, Imports: []string{httpPkg.ImportPath}}
	got, err := Check([]Package{httpPkg, good, bad})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Package != bad.ImportPath || !strings.Contains(got[0].Reason, "NewServer") {
		t.Fatalf("violations = %v, want bad's use of NewServer only", got)
	}
	noContract := Package{ImportPath: Module + "/plugins/orm", Dir: filepath.Join(dir, "none")}
	user := Package{ImportPath: Module + "/plugins/user", Dir: dir, Imports: []string{noContract.ImportPath}}
	got, _ = Check([]Package{noContract, user})
	if len(got) != 1 || !strings.Contains(got[0].Reason, "has no contract.go") {
		t.Fatalf("violations = %v, want a missing contract.go reported", got)
	}
}

// The image's binary (cmd/manager built with -tags nodev, as the
// Dockerfile does) links no test code: not package testing, not envtest,
// not the test infrastructure nor manager dev's control plane. Seen
// failing without the nodev build constraint on cmd/manager/dev.go (envtest
// and internal/testinfra/envtestbin were linked).
func TestProductionBinaryLinksNoTestCode(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-tags", "nodev", "./cmd/manager")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, Module+"/internal/operator") {
		t.Fatalf("go list listed %d packages without the operator; the check would prove nothing", len(deps))
	}
	for _, dep := range deps {
		if dep == "testing" || strings.Contains(dep, "/envtest") || strings.HasPrefix(dep, Module+"/internal/testinfra") ||
			strings.HasPrefix(dep, Module+"/internal/cli/devenv") || strings.HasSuffix(dep, "test") && strings.HasPrefix(dep, Module) {
			t.Errorf("the production binary links %s", dep)
		}
	}
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "-tags nodev") {
		t.Error("the Dockerfile does not build cmd/manager with -tags nodev")
	}
}

// The kernel binary (cmd/sms-kernel) links nothing of Kubernetes or the
// operator, and the sandbox binary (cmd/sms-sandbox) only the runtime and
// the kernel's types: each kernel and each sandbox child maps and
// initializes only what it runs (docs/benchmarks.md, tenant density).
// Seen failing with kernelcmd reading the bootstrap admin's file names
// from api/v1 (k8s.io/api and apimachinery were linked).
func TestKernelAndSandboxBinariesStaySmall(t *testing.T) {
	deps := func(pkg string) []string {
		cmd := exec.Command("go", "list", "-deps", pkg)
		cmd.Dir = "../.."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	kernelDeps := deps("./cmd/sms-kernel")
	if !slices.Contains(kernelDeps, Module+"/kernelcmd") {
		t.Fatalf("cmd/sms-kernel does not link kernelcmd; the check would prove nothing")
	}
	for _, dep := range kernelDeps {
		if strings.HasPrefix(dep, "k8s.io/") || strings.HasPrefix(dep, "sigs.k8s.io/controller-runtime") ||
			dep == Module+"/api/v1" || dep == Module+"/controllers" || strings.HasPrefix(dep, Module+"/internal/operator") {
			t.Errorf("cmd/sms-kernel links %s", dep)
		}
	}
	allowed := []string{Module + "/kernel", Module + "/contracts", Module + "/drivers/executor/"}
	for _, dep := range deps("./cmd/sms-sandbox") {
		if !strings.HasPrefix(dep, Module) || dep == Module+"/cmd/sms-sandbox" {
			continue
		}
		if !slices.ContainsFunc(allowed, func(p string) bool { return strings.HasPrefix(dep, p) }) {
			t.Errorf("cmd/sms-sandbox links %s", dep)
		}
	}
}
