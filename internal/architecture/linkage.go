package architecture

import (
	"slices"
	"strings"
)

// standardOnly lists module packages, outside ring 0 and 1, that import
// the standard library only, and why.
var standardOnly = map[string]string{
	"plugins/adminapi/adminv1": "the admin API's wire contract imports the standard library only, " +
		"so its clients (the operator, kubectl sms) link no kernel",
}

// kernelHeavy are what a kernel-free package may link neither directly
// nor through its dependencies: the kernel, the judge and the
// JavaScript engine the judge's lint and the executors use.
var kernelHeavy = []string{Module + "/kernel", Module + "/judge", "github.com/dop251/goja"}

// kernelFree lists the packages (module-relative prefixes) that drive
// kernels only through the admin API (plugins/adminapi/adminv1) and so
// link no kernel, and the packages under them that host kernels
// themselves: the operator's assembly and its local runtime, which runs
// kernels in process, and the development environment.
var kernelFree = []struct {
	prefix string
	except []string
}{
	{prefix: "controllers"},
	{prefix: "internal/cli", except: []string{"internal/cli/devenv"}},
	{prefix: "internal/operator", except: []string{"internal/operator", "internal/operator/kernelruntime/local"}},
	{prefix: "cmd/kubectl-sms"},
}

// linksKernel reports the kernel-heavy packages p links although it is
// kernel-free: each one it imports or depends on.
func linksKernel(p Package) []Violation {
	rel, _ := relative(p.ImportPath)
	if !isKernelFree(rel) {
		return nil
	}
	var out []Violation
	for _, heavy := range kernelHeavy {
		for _, dep := range append(slices.Clone(p.Imports), p.Deps...) {
			if dep == heavy || strings.HasPrefix(dep, heavy+"/") {
				out = append(out, Violation{Package: p.ImportPath, Import: dep,
					Reason: "links the kernel, the judge or goja (directly or through a dependency): " +
						"it reaches kernels through plugins/adminapi/adminv1 only"})
				break
			}
		}
	}
	return out
}

func isKernelFree(rel string) bool {
	for _, k := range kernelFree {
		if matches(rel, k.prefix) && !slices.ContainsFunc(k.except, func(e string) bool { return rel == e }) {
			return true
		}
	}
	return false
}
