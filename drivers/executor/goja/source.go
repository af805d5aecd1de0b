package goja

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	js "github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// Agent code is written as an ES module with one export:
//
//	export default async function activate(cap) { ... }
//
// goja has no modules, so the export is rewritten into a plain function
// declaration inside a strict wrapper function (modules are strict), which
// returns it:
//
//	(function(){'use strict';               async function activate(cap) { ... }
//	;return activate})
//
// The words "export default" become spaces, so lines and columns stay where
// the author wrote them; an anonymous function is given the name __default.
// A declaration, unlike an assigned expression, cannot be continued by a
// following line that starts with a parenthesis. Every other import or
// export is refused.

const (
	defaultName   = "__default"
	wrapperPrefix = "(function(){'use strict';"
)

// ErrSource marks agent code refused before it runs: too large, too deeply
// nested, a syntax error, or an import or export goja cannot run.
var ErrSource = errors.New("agent code refused")

var (
	exportDefault = regexp.MustCompile(`\bexport\s+default\s+(?:async\s+)?function\b(?:\s*\*)?\s*([A-Za-z_$][\w$]*)?\s*\(`)
	moduleWord    = regexp.MustCompile(`\b(export|import)\b`)
)

// SourceLimits bound agent code before the parser sees it: the parser and
// compiler recurse on nesting, and their cost grows with it.
type SourceLimits struct {
	MaxBytes   int // the largest source accepted
	MaxNesting int // the deepest nesting of (), [], {} and ${} accepted
}

// Prepare checks agent code against the limits, rewrites its one
// `export default async function activate(cap)` into something goja runs, and
// parses it (source maps disabled: a sourceMappingURL comment must never make
// the host read a file). It returns the wrapped source and its syntax tree,
// whose top level is one function expression returning the activate function.
func Prepare(code string, lim SourceLimits) (string, *ast.Program, error) {
	if len(code) > lim.MaxBytes {
		return "", nil, fmt.Errorf("%w: %d bytes exceeds the limit of %d", ErrSource, len(code), lim.MaxBytes)
	}
	if depth := Nesting(code); depth > lim.MaxNesting {
		return "", nil, fmt.Errorf("%w: brackets nest %d levels deep, more than the limit of %d", ErrSource, depth, lim.MaxNesting)
	}
	if m := exportDefault.FindAllStringSubmatchIndex(code, 2); len(m) == 1 {
		// The usual case: one textual match. If it sat in a string or a
		// comment, the syntax tree shows no declaration and the code is refused.
		rewritten, name := rewrite(code, m[0])
		src := wrap(rewritten, name)
		if prg, err := parse(src); err == nil {
			return src, prg, checkTopLevel(prg, name)
		}
	}
	return prepareSlow(code)
}

// prepareSlow finds the export the way the parser sees it: goja stops at the
// first `export` or `import` keyword that is real code, so each parse error
// at such a keyword is either the one allowed export or a refusal.
func prepareSlow(code string) (string, *ast.Program, error) {
	name := ""
	for {
		src := wrap(code, name)
		prg, err := parse(src)
		if err == nil {
			if name == "" {
				return "", nil, fmt.Errorf("%w: no `export default async function activate(cap)` found", ErrSource)
			}
			return src, prg, checkTopLevel(prg, name)
		}
		off, word := keywordAt(src, err)
		if off < 0 {
			return "", nil, fmt.Errorf("%w: %s", ErrSource, syntaxMessage(code, err))
		}
		off -= len(wrapperPrefix)
		line := 1 + strings.Count(code[:off], "\n")
		loc := exportDefault.FindStringSubmatchIndex(code[off:])
		switch {
		case word == "import":
			return "", nil, fmt.Errorf("%w: line %d: import is not supported; agent code reaches everything through cap", ErrSource, line)
		case loc == nil || loc[0] != 0:
			return "", nil, fmt.Errorf("%w: line %d: the only export allowed is `export default async function activate(cap)`", ErrSource, line)
		case name != "":
			return "", nil, fmt.Errorf("%w: line %d: only one export is allowed", ErrSource, line)
		}
		for i := range loc {
			if loc[i] >= 0 {
				loc[i] += off
			}
		}
		code, name = rewrite(code, loc)
	}
}

// rewrite turns the export that match (submatch indices) found into a plain
// declaration and returns the code and the function's name.
func rewrite(code string, match []int) (string, string) {
	start, end := match[0], match[1]
	b := []byte(code)
	words := bytes.Index(b[start:end], []byte("default")) + len("default")
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

func wrap(code, name string) string {
	if name == "" {
		name = defaultName
	}
	return wrapperPrefix + code + "\n;return " + name + "})"
}

func parse(src string) (*ast.Program, error) {
	return parser.ParseFile(nil, "agent.js", src, 0, parser.WithDisableSourceMaps)
}

// keywordAt returns the offset of the import or export keyword the first
// parse error points at, or -1 when the error is elsewhere.
func keywordAt(src string, err error) (int, string) {
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return -1, ""
	}
	pos := list[0].Position
	f := file.NewFile("", src, 0)
	for _, m := range moduleWord.FindAllStringIndex(src, -1) {
		p := f.Position(m[0])
		if p.Line == pos.Line && p.Column == pos.Column {
			return m[0], src[m[0]:m[1]]
		}
	}
	return -1, ""
}

// syntaxMessage reports the first syntax error with its line in the agent's
// own numbering (the wrapper adds nothing before the first line's code). An
// error past the last line is in the wrapper's closing: the code ended early.
func syntaxMessage(code string, err error) string {
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return err.Error()
	}
	if lines := 1 + strings.Count(code, "\n"); list[0].Position.Line > lines {
		return fmt.Sprintf("line %d: Unexpected end of input (a bracket, string or comment is not closed)", lines)
	}
	return fmt.Sprintf("line %d: %s", list[0].Position.Line, list[0].Message)
}

// checkTopLevel requires the export to be a declaration of the module
// itself, not of a nested function.
func checkTopLevel(prg *ast.Program, name string) error {
	for _, st := range WrapperBody(prg) {
		if d, ok := st.(*ast.FunctionDeclaration); ok && d.Function.Name != nil && d.Function.Name.Name.String() == name {
			return nil
		}
	}
	return fmt.Errorf("%w: the export must be a top-level `export default async function activate(cap)`", ErrSource)
}

// WrapperBody returns the statements of the agent code inside the wrapper
// Prepare adds, or nil if prg is not a wrapped program.
func WrapperBody(prg *ast.Program) []ast.Statement {
	if len(prg.Body) != 1 {
		return nil
	}
	st, ok := prg.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	fn, ok := st.Expression.(*ast.FunctionLiteral)
	if !ok || fn.Body == nil {
		return nil
	}
	return fn.Body.List
}

// Nesting returns the deepest nesting of brackets in code, skipping string
// literals and comments; `${` in a template literal counts as a bracket.
// Regular expression literals are not recognised, so brackets inside them
// count too: the result never underestimates.
func Nesting(code string) int {
	var depth, deepest int
	var quote byte // the open string's quote, or 0
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

// compile compiles a prepared program.
func compile(prg *ast.Program) (*js.Program, error) {
	p, err := js.CompileAST(prg, true)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSource, err)
	}
	return p, nil
}
