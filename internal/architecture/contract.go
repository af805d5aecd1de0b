package architecture

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// contractFile is where a plugin declares what other plugins may use.
const contractFile = "contract.go"

// wireContracts are plugin packages that are a contract whole: a wire
// contract (types, names, a client) importing the standard library only
// (linkage.go holds them to it), which any plugin may use all of.
var wireContracts = map[string]bool{"plugins/adminapi/adminv1": true}

// checkContractUse reports a plugin using an identifier of another plugin
// that the other plugin's contract.go does not declare.
func checkContractUse(importer, imported Package) (string, error) {
	allowed, err := declared(filepath.Join(imported.Dir, contractFile))
	if err != nil {
		return "", err
	}
	if allowed == nil {
		return fmt.Sprintf("%s has no %s; plugins may use only another plugin's contract", imported.ImportPath, contractFile), nil
	}
	var bad []string
	for _, name := range importer.GoFiles {
		used, err := selectorsOf(filepath.Join(importer.Dir, name), imported.ImportPath)
		if err != nil {
			return "", err
		}
		for _, id := range used {
			if !allowed[id] {
				bad = append(bad, id)
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Sprintf("uses %s, not declared in its %s", strings.Join(bad, ", "), contractFile), nil
	}
	return "", nil
}

// declared returns the top-level names declared in file, or nil if the
// file does not exist.
func declared(file string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	return names, nil
}

// selectorsOf returns the identifiers file uses from the package at path.
func selectorsOf(file, path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == path {
			local = filepath.Base(path)
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil, nil
	}
	var used []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
				used = append(used, sel.Sel.Name)
			}
		}
		return true
	})
	return used, nil
}
