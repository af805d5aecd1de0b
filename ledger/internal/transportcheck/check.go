package transportcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Rules a Violation can break.
const (
	RuleImport   = "import"
	RuleDepends  = "dependency"
	RuleCallback = "callback"
	RuleName     = "outbound name"
	RuleFloat    = "float"
)

// Violation is one way the package could reach outside its process.
type Violation struct {
	// Rule is one of the Rule constants.
	Rule string
	// Subject names the offending import, dependency or identifier.
	Subject string
	// Where is the file and line, when known.
	Where string
}

func (v Violation) String() string {
	if v.Where == "" {
		return fmt.Sprintf("%s: %s", v.Rule, v.Subject)
	}
	return fmt.Sprintf("%s: %s: %s", v.Where, v.Rule, v.Subject)
}

// deniedImports may not be imported directly, even from the standard library.
var deniedImports = []string{"net", "os/exec", "syscall", "plugin", "unsafe", "log/syslog", "C"}

// deniedDeps may not be reached even transitively. syscall and unsafe are
// missing because every program depends on them through the runtime.
var deniedDeps = []string{"net", "os/exec", "plugin", "log/syslog"}

// outboundVerbs are name prefixes that imply an effect outside the process.
var outboundVerbs = []string{
	"send", "notify", "post", "publish", "dispatch", "emit", "fetch", "push",
	"deliver", "execute", "perform", "call", "webhook", "mail",
}

// Check inspects the package in dir and returns its violations, sorted.
func Check(dir string) ([]Violation, error) {
	listed, err := goList(dir)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", dir, err)
	}
	fset := token.NewFileSet()
	all, err := parseDir(fset, listed.Dir)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", dir, err)
	}
	var out []Violation
	for _, f := range all {
		out = append(out, importViolations(fset, f)...)
	}
	out = append(out, depViolations(listed.Deps)...)
	api, err := apiViolations(fset, listed, buildFiles(all, listed))
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", dir, err)
	}
	out = append(out, api...)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// parseDir parses every non-test Go file in dir, whatever its build constraints.
func parseDir(fset *token.FileSet, dir string) (map[string]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string]*ast.File{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files[name] = f
	}
	return files, nil
}

// buildFiles picks the files go list says belong to the build.
func buildFiles(all map[string]*ast.File, listed *listedPackage) []*ast.File {
	var out []*ast.File
	for _, name := range append(listed.GoFiles, listed.CgoFiles...) {
		if f, ok := all[name]; ok {
			out = append(out, f)
		}
	}
	return out
}

func importViolations(fset *token.FileSet, f *ast.File) []Violation {
	var out []Violation
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		where := position(fset, spec.Pos())
		switch {
		case !isStandard(path):
			out = append(out, Violation{RuleImport, "non-standard package " + path, where})
		case matchesAny(path, deniedImports):
			out = append(out, Violation{RuleImport, path, where})
		}
	}
	return out
}

func depViolations(deps []string) []Violation {
	var out []Violation
	for _, d := range deps {
		if matchesAny(d, deniedDeps) {
			out = append(out, Violation{Rule: RuleDepends, Subject: d})
		}
	}
	return out
}

// isStandard reports whether path names a standard-library package: its
// first element has no dot, and it is not cgo's pseudo-package.
func isStandard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") && path != "C"
}

// matchesAny reports whether path is one of the prefixes or below one.
func matchesAny(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// impliesOutbound reports whether a word of the camel-case name starts with
// an outbound verb, or mentions mail (as in SendEmail or Mailer).
func impliesOutbound(name string) bool {
	for _, w := range words(name) {
		if strings.Contains(w, "mail") {
			return true
		}
		for _, v := range outboundVerbs {
			if strings.HasPrefix(w, v) {
				return true
			}
		}
	}
	return false
}

// words splits a camel-case identifier into lower-case words: NotifyURLNow
// gives notify, url, now.
func words(name string) []string {
	var out []string
	start := 0
	for i := 1; i < len(name); i++ {
		prevLower := isLower(name[i-1])
		upper := isUpper(name[i])
		nextLower := i+1 < len(name) && isLower(name[i+1])
		if upper && (prevLower || (isUpper(name[i-1]) && nextLower)) || name[i] == '_' {
			out = append(out, strings.ToLower(strings.Trim(name[start:i], "_")))
			start = i
		}
	}
	return append(out, strings.ToLower(strings.Trim(name[start:], "_")))
}

func isLower(b byte) bool { return b >= 'a' && b <= 'z' }
func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

func position(fset *token.FileSet, pos token.Pos) string {
	p := fset.Position(pos)
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}
