package architecture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

// Package is the part of `go list -json` output the check reads.
type Package struct {
	ImportPath string
	Dir        string
	Standard   bool
	GoFiles    []string
	Imports    []string
	// Deps are every package Imports reach, directly or not.
	Deps []string
}

// Violation is one import that breaks the rings.
type Violation struct {
	Package string
	Import  string
	Reason  string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s imports %s: %s", v.Package, v.Import, v.Reason)
}

// Load lists the module's packages and their dependencies with `go list`,
// run in dir (the module root or below).
func Load(dir string) ([]Package, error) {
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(&out)
	for {
		var p Package
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// Check returns every violation among the module's packages in pkgs, sorted.
// pkgs must include the standard library packages they import (go list -deps).
func Check(pkgs []Package) ([]Violation, error) {
	std := map[string]bool{}
	byPath := map[string]Package{}
	for _, p := range pkgs {
		std[p.ImportPath] = p.Standard
		byPath[p.ImportPath] = p
	}
	var out []Violation
	for _, p := range pkgs {
		if _, ok := relative(p.ImportPath); !ok || p.Standard {
			continue
		}
		for _, imp := range p.Imports {
			if std[imp] {
				continue
			}
			reason, err := judge(p, byPath[imp], imp)
			if err != nil {
				return nil, err
			}
			if reason != "" {
				out = append(out, Violation{Package: p.ImportPath, Import: imp, Reason: reason})
			}
		}
		out = append(out, linksKernel(p)...)
		if KindOf(p.ImportPath) == Unknown {
			out = append(out, Violation{Package: p.ImportPath, Reason: "the package has no ring; add its path to the table in rules.go"})
		}
	}
	slices.SortFunc(out, func(a, b Violation) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// judge returns why importer may not import imp, or "" if it may.
func judge(importer, imported Package, imp string) (string, error) {
	if rel, _ := relative(importer.ImportPath); standardOnly[rel] != "" {
		return standardOnly[rel], nil
	}
	kind := KindOf(importer.ImportPath)
	if _, inModule := relative(imp); !inModule {
		return judgeThirdParty(importer.ImportPath, imp), nil
	}
	target := KindOf(imp)
	if kind != Root && family(importer.ImportPath) == family(imp) && (kind != Ledger || target != LedgerStore) {
		return "", nil
	}
	switch kind {
	case Kernel:
		return "ring 0 imports the standard library only", nil
	case Contract:
		return below(target, Kernel, "ring 1 imports only the kernel"), nil
	case Plugin:
		if target == Plugin && wireContracts[strings.TrimPrefix(imp, Module+"/")] {
			return "", nil // a whole package that is a contract
		}
		if target == Plugin {
			return checkContractUse(importer, imported)
		}
		return below(target, Contract, "a plugin imports only the kernel, contracts and other plugins' contracts"), nil
	case Driver:
		if rel, _ := relative(imp); target == Driver && slices.Contains(allowedDriverImports, rel) {
			return "", nil
		}
		return below(target, Contract, "a driver imports only the kernel, contracts and its own library"), nil
	case Baseline:
		if target.Ring() >= 0 && target.Ring() <= 2 || target == Ledger || target == LedgerStore {
			return "", nil
		}
		return "ring 3 imports only rings 0 to 2 and the ledger", nil
	case Ledger, LedgerStore:
		return "the ledger is an island: it imports nothing else from the module", nil
	case Root:
		from, _ := relative(importer.ImportPath)
		to, _ := relative(imp)
		return judgeAudience(from, to), nil
	}
	return "", nil
}

// below returns reason unless target is a known kind at or under max's ring.
func below(target, max Kind, reason string) string {
	if target.Ring() >= 0 && target.Ring() <= max.Ring() {
		return ""
	}
	return reason
}

func judgeThirdParty(importer, imp string) string {
	rel, _ := relative(importer)
	if allowedImport(thirdPartyByPackage[rel], imp) {
		return ""
	}
	kind := KindOf(importer)
	switch kind {
	case Root:
		return ""
	case Driver, Baseline:
		if isKubernetes(imp) {
			return "only ring 4 may import Kubernetes libraries"
		}
		return ""
	case Kernel, Contract, Ledger:
		return "this package imports the standard library only"
	}
	if allowedImport(thirdParty[kind], imp) {
		return ""
	}
	return "a third-party import not on this ring's list in rules.go"
}

// allowedImport reports whether imp is one of the allowed modules or
// packages, or a package below one.
func allowedImport(allowed []string, imp string) bool {
	for _, a := range allowed {
		if imp == a || strings.HasPrefix(imp, a+"/") {
			return true
		}
	}
	return false
}
