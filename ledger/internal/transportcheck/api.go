package transportcheck

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
)

// apiViolations type-checks the package and inspects its exported API and
// every typed expression.
func apiViolations(fset *token.FileSet, listed *listedPackage, files []*ast.File) ([]Violation, error) {
	lookup := func(path string) (io.ReadCloser, error) {
		file := listed.exports[path]
		if file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "gc", lookup),
		// Unresolvable imports are reported as import violations already;
		// keep checking what can be checked.
		Error: func(error) {},
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	pkg, _ := conf.Check(listed.ImportPath, fset, files, info)
	var out []Violation
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		out = append(out, objectViolations(fset, obj)...)
	}
	return append(out, floatViolations(fset, info)...), nil
}

func objectViolations(fset *token.FileSet, obj types.Object) []Violation {
	where := position(fset, obj.Pos())
	switch obj := obj.(type) {
	case *types.Func:
		return funcViolations(fset, obj.Name(), obj)
	case *types.Var:
		if containsFunc(obj.Type(), map[types.Type]bool{}) {
			return []Violation{{RuleCallback, "variable " + obj.Name() + " holds a function", where}}
		}
	case *types.TypeName:
		return typeViolations(fset, obj)
	}
	return nil
}

// typeViolations inspects the exported methods of a named type, including
// those of an interface (a port).
func typeViolations(fset *token.FileSet, tn *types.TypeName) []Violation {
	var out []Violation
	if iface, ok := tn.Type().Underlying().(*types.Interface); ok {
		for m := range iface.Methods() {
			if m.Exported() {
				out = append(out, funcViolations(fset, tn.Name()+"."+m.Name(), m)...)
			}
		}
		return out
	}
	mset := types.NewMethodSet(types.NewPointer(tn.Type()))
	for sel := range mset.Methods() {
		if m := sel.Obj().(*types.Func); m.Exported() && m.Pkg() == tn.Pkg() {
			out = append(out, funcViolations(fset, tn.Name()+"."+m.Name(), m)...)
		}
	}
	return out
}

func funcViolations(fset *token.FileSet, name string, fn *types.Func) []Violation {
	var out []Violation
	where := position(fset, fn.Pos())
	if impliesOutbound(fn.Name()) {
		out = append(out, Violation{RuleName, name, where})
	}
	sig := fn.Type().(*types.Signature)
	for p := range sig.Params().Variables() {
		if containsFunc(p.Type(), map[types.Type]bool{}) {
			out = append(out, Violation{RuleCallback, fmt.Sprintf("%s takes a function in parameter %q", name, p.Name()), where})
		}
	}
	return out
}

// containsFunc reports whether t is a function type or holds one in an
// element, key or struct field. Interfaces are ports, not callbacks, and are
// inspected where they are declared.
func containsFunc(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Signature:
		return true
	case *types.Pointer:
		return containsFunc(u.Elem(), seen)
	case *types.Slice:
		return containsFunc(u.Elem(), seen)
	case *types.Array:
		return containsFunc(u.Elem(), seen)
	case *types.Chan:
		return containsFunc(u.Elem(), seen)
	case *types.Map:
		return containsFunc(u.Key(), seen) || containsFunc(u.Elem(), seen)
	case *types.Struct:
		for f := range u.Fields() {
			if containsFunc(f.Type(), seen) {
				return true
			}
		}
	}
	return false
}

// floatViolations reports every expression of floating-point or complex type.
func floatViolations(fset *token.FileSet, info *types.Info) []Violation {
	var out []Violation
	for expr, tv := range info.Types {
		if b, ok := tv.Type.Underlying().(*types.Basic); ok && b.Info()&(types.IsFloat|types.IsComplex) != 0 {
			out = append(out, Violation{RuleFloat, fmt.Sprintf("%s value %s", b.Name(), types.ExprString(expr)), position(fset, expr.Pos())})
		}
	}
	return out
}
