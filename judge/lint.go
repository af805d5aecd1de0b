package judge

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/dop251/goja/ast"

	"github.com/sms-baseline/sms/contracts/agentsource"
)

// The source-lint gate reads agent code through package agentsource, the
// front end the executors compile it with: the same limits, the same
// rewrite of the one export, the same refusals. Then it walks the syntax
// tree for what the judge refuses on top: code that compiles code (eval,
// Function, a .constructor), require, with. The executors make code
// generation throw at run time however it is spelled; the gate refuses the
// plain spellings early, naming the line.

// Source limits, the executors' defaults.
const (
	MaxSourceBytes   = agentsource.DefaultMaxBytes
	MaxSourceNesting = agentsource.DefaultMaxNesting
)

// sourceLimits are the limits the lint gate reads code with.
var sourceLimits = agentsource.Limits{MaxBytes: MaxSourceBytes, MaxNesting: MaxSourceNesting}

// forbiddenNames are identifiers agent code may not mention.
var forbiddenNames = map[string]string{
	"eval":          "eval compiles code at run time",
	"Function":      "the Function constructor compiles code at run time",
	"require":       "agent code has no modules; reach the host through cap",
	"importScripts": "agent code has no modules; reach the host through cap",
}

// forbiddenProperties are property names agent code may not use.
var forbiddenProperties = map[string]string{
	"constructor": "a function's constructor compiles code at run time",
}

// lint checks agent code and returns the first problem, naming its line.
func lint(code string) error {
	prg, err := agentsource.Prepare(code, sourceLimits)
	if err != nil {
		return lintRefusal(err)
	}
	var found error
	walk(prg.AST, func(n ast.Node) bool {
		if msg := forbidden(n); msg != "" {
			found = fmt.Errorf("line %d: %s", prg.Line(n.Idx0()), msg)
		}
		return found == nil
	})
	return found
}

// lintRefusal words a front-end refusal as the gate's rule for the author;
// the problems worded alike keep the front end's wording. Either way the
// error unwraps to the *agentsource.Error.
func lintRefusal(err error) error {
	var e *agentsource.Error
	if !errors.As(err, &e) {
		return err
	}
	var msg string
	switch e.Problem {
	case agentsource.TooLarge:
		msg = fmt.Sprintf("the code is %d bytes, more than the limit of %d", e.Size, e.Limit)
	case agentsource.UnexpectedEnd:
		msg = fmt.Sprintf("line %d: syntax error: unexpected end of input", e.Line)
	case agentsource.Syntax:
		msg = "syntax error: " + e.Detail
		if e.Line > 0 {
			msg = fmt.Sprintf("line %d: %s", e.Line, msg)
		}
	case agentsource.Import:
		msg = fmt.Sprintf("line %d: import is not allowed; agent code reaches the host through cap", e.Line)
	case agentsource.NoExport, agentsource.NotTopLevel:
		msg = "the code has no top-level `export default async function activate(cap)`"
	default:
		return err
	}
	return &lintError{msg: msg, cause: e}
}

// lintError is a front-end refusal in the lint gate's words.
type lintError struct {
	msg   string
	cause *agentsource.Error
}

func (r *lintError) Error() string { return r.msg }
func (r *lintError) Unwrap() error { return r.cause }

func forbidden(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Identifier:
		if why, ok := forbiddenNames[n.Name.String()]; ok {
			return n.Name.String() + " is not allowed: " + why
		}
	case *ast.DotExpression:
		if why, ok := forbiddenProperties[n.Identifier.Name.String()]; ok {
			return "." + n.Identifier.Name.String() + " is not allowed: " + why
		}
	case *ast.StringLiteral:
		if why, ok := forbiddenProperties[n.Value.String()]; ok {
			return fmt.Sprintf("%q is not allowed: %s", n.Value.String(), why)
		}
	case *ast.WithStatement:
		return "with is not allowed"
	}
	return ""
}

var (
	nodeType    = reflect.TypeFor[ast.Node]()
	astPkgPath  = reflect.TypeFor[ast.Program]().PkgPath()
	programType = reflect.TypeFor[*ast.Program]()
)

// walk visits every node of the tree, parents first, until visit returns
// false. It follows every field whose type belongs to the ast package, so a
// node type it was not told about is walked too; the walk is iterative, so
// deep code cannot overflow the stack.
func walk(prg *ast.Program, visit func(ast.Node) bool) {
	stack := []reflect.Value{reflect.ValueOf(prg)}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				stack = append(stack, v.Elem())
			}
		case reflect.Pointer:
			if v.IsNil() {
				continue
			}
			if v.Type().Implements(nodeType) && v.Type() != programType && v.CanInterface() && !visit(v.Interface().(ast.Node)) {
				return
			}
			stack = append(stack, v.Elem())
		case reflect.Slice:
			for i := v.Len() - 1; i >= 0; i-- {
				stack = append(stack, v.Index(i))
			}
		case reflect.Struct:
			for i := v.NumField() - 1; i >= 0; i-- {
				if f := v.Field(i); inAST(f.Type()) {
					stack = append(stack, f)
				}
			}
		}
	}
}

// inAST reports whether t is, or holds, a type of the ast package.
func inAST(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t.PkgPath() == astPkgPath && (t.Kind() == reflect.Struct || t.Kind() == reflect.Interface)
}
