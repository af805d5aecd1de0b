package judge

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// The source-lint gate reads agent code with goja's parser. goja has no
// modules, so the one export agent code has, `export default async function
// activate(cap)`, is rewritten into a plain declaration inside a strict
// wrapper function before parsing (as the executors do: the words become
// spaces, an anonymous function is named), and every other import or export
// is refused. Then the syntax tree is walked for what the judge refuses:
// code that compiles code (eval, Function, a .constructor), require, with.

// Source limits, the same as the executors' defaults.
const (
	MaxSourceBytes   = 256 << 10
	MaxSourceNesting = 64
)

const (
	defaultName   = "__default"
	wrapperPrefix = "(function(){'use strict';"
)

var (
	exportDefault = regexp.MustCompile(`\bexport\s+default\s+(?:async\s+)?function\b(?:\s*\*)?\s*([A-Za-z_$][\w$]*)?\s*\(`)
	moduleWord    = regexp.MustCompile(`\b(export|import)\b`)
)

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
	prg, err := parseAgent(code)
	if err != nil {
		return err
	}
	var found error
	walk(prg, func(n ast.Node) bool {
		if msg := forbidden(n); msg != "" {
			found = fmt.Errorf("line %d: %s", prg.File.Position(int(n.Idx0())-prg.File.Base()).Line, msg)
		}
		return found == nil
	})
	return found
}

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

// parseAgent checks the source limits, rewrites the export and parses.
// Source maps are disabled: a sourceMappingURL comment must never make the
// judge read a file.
func parseAgent(code string) (*ast.Program, error) {
	if len(code) > MaxSourceBytes {
		return nil, fmt.Errorf("the code is %d bytes, more than the limit of %d", len(code), MaxSourceBytes)
	}
	if depth := nesting(code); depth > MaxSourceNesting {
		return nil, fmt.Errorf("brackets nest %d levels deep, more than the limit of %d", depth, MaxSourceNesting)
	}
	name := ""
	if m := exportDefault.FindAllStringSubmatchIndex(code, 2); len(m) == 1 {
		code, name = rewrite(code, m[0])
	}
	for {
		src := wrapperPrefix + code + "\n;return " + cmp.Or(name, defaultName) + "})"
		prg, err := parser.ParseFile(nil, "agent.js", src, 0, parser.WithDisableSourceMaps)
		if err == nil {
			if name == "" || !declaredAtTop(prg, name) {
				return nil, errors.New("the code has no top-level `export default async function activate(cap)`")
			}
			return prg, nil
		}
		off := keywordAt(src, err) - len(wrapperPrefix)
		if off < 0 {
			return nil, syntaxError(code, err)
		}
		line := 1 + strings.Count(code[:off], "\n")
		loc := exportDefault.FindStringSubmatchIndex(code[off:])
		switch {
		case strings.HasPrefix(code[off:], "import"):
			return nil, fmt.Errorf("line %d: import is not allowed; agent code reaches the host through cap", line)
		case loc == nil || loc[0] != 0:
			return nil, fmt.Errorf("line %d: the only export allowed is `export default async function activate(cap)`", line)
		case name != "":
			return nil, fmt.Errorf("line %d: only one export is allowed", line)
		}
		for i := range loc {
			if loc[i] >= 0 {
				loc[i] += off
			}
		}
		code, name = rewrite(code, loc)
	}
}

// rewrite turns the export match found into a plain declaration and returns
// the code and the function's name.
func rewrite(code string, match []int) (string, string) {
	start, end := match[0], match[1]
	b := []byte(code)
	words := strings.Index(code[start:end], "default") + len("default")
	for i := start; i < start+words; i++ {
		if b[i] != '\n' && b[i] != '\r' {
			b[i] = ' '
		}
	}
	if match[2] >= 0 {
		return string(b), code[match[2]:match[3]]
	}
	paren := end - 1 // the match ends with the parameter list's "("
	return string(b[:paren]) + " " + defaultName + string(b[paren:]), defaultName
}

// keywordAt returns the offset of the import or export keyword the first
// parse error points at, or -1.
func keywordAt(src string, err error) int {
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return -1
	}
	pos := list[0].Position
	f := file.NewFile("", src, 0)
	for _, m := range moduleWord.FindAllStringIndex(src, -1) {
		if p := f.Position(m[0]); p.Line == pos.Line && p.Column == pos.Column {
			return m[0]
		}
	}
	return -1
}

func syntaxError(code string, err error) error {
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return fmt.Errorf("syntax error: %w", err)
	}
	if lines := 1 + strings.Count(code, "\n"); list[0].Position.Line > lines {
		return fmt.Errorf("line %d: syntax error: unexpected end of input", lines)
	}
	return fmt.Errorf("line %d: syntax error: %s", list[0].Position.Line, list[0].Message)
}

// declaredAtTop reports whether the exported function is declared by the
// module itself, not inside a nested function.
func declaredAtTop(prg *ast.Program, name string) bool {
	if len(prg.Body) != 1 {
		return false
	}
	st, ok := prg.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	fn, ok := st.Expression.(*ast.FunctionLiteral)
	if !ok || fn.Body == nil {
		return false
	}
	for _, s := range fn.Body.List {
		if d, ok := s.(*ast.FunctionDeclaration); ok && d.Function.Name != nil && d.Function.Name.Name.String() == name {
			return true
		}
	}
	return false
}

// nesting returns the deepest bracket nesting outside strings and comments.
func nesting(code string) int {
	var depth, deepest int
	var quote byte
	var templates []int
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case quote != 0:
			switch {
			case c == '\\':
				i++
			case c == quote:
				quote = 0
			case quote == '`' && c == '$' && i+1 < len(code) && code[i+1] == '{':
				i++
				templates = append(templates, depth)
				quote = 0
				depth++
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '/' && i+1 < len(code) && code[i+1] == '/':
			for i < len(code) && code[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(code) && code[i+1] == '*':
			end := strings.Index(code[i+2:], "*/")
			if end < 0 {
				return deepest
			}
			i += end + 3
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
			if c == '}' && len(templates) > 0 && templates[len(templates)-1] == depth {
				templates = templates[:len(templates)-1]
				quote = '`'
			}
		}
		deepest = max(deepest, depth)
	}
	return deepest
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
