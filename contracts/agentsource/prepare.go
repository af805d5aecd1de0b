package agentsource

import (
	"errors"
	"regexp"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// Default limits, the ones a zero Limits field stands for.
const (
	DefaultMaxBytes   = 256 << 10
	DefaultMaxNesting = 64
)

// Limits bound agent code before the parser sees it: the parser and
// compiler recurse on nesting, and their cost grows with it. A field of zero
// or less takes its default.
type Limits struct {
	MaxBytes   int // the largest code accepted, in bytes
	MaxNesting int // the deepest nesting of (), [], {} and ${} accepted
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxNesting <= 0 {
		l.MaxNesting = DefaultMaxNesting
	}
	return l
}

// Program is agent code ready for goja: the wrapped source, its syntax
// tree and the name of the function the wrapper returns.
type Program struct {
	Source string
	AST    *ast.Program
	Name   string
}

// Body returns the agent's own statements, inside the wrapper.
func (p *Program) Body() []ast.Statement { return body(p.AST) }

// Line returns the line of the agent's code a position of the tree is on;
// the wrapper adds nothing before the code's first line.
func (p *Program) Line(idx file.Idx) int {
	return p.AST.File.Position(int(idx) - p.AST.File.Base()).Line
}

const (
	defaultName   = "__default"
	wrapperPrefix = "(function(){'use strict';"
)

var (
	exportDefault = regexp.MustCompile(`\bexport\s+default\s+(?:async\s+)?function\b(?:\s*\*)?\s*([A-Za-z_$][\w$]*)?\s*\(`)
	moduleWord    = regexp.MustCompile(`\b(export|import)\b`)
)

// export is the one export, rewritten: the function's name, and the span
// of code from where "export" stood to the parameter list's "(", in which
// the declaration the rewrite made begins.
type export struct {
	name       string
	start, end int
}

// Prepare checks agent code against the limits, rewrites its one export
// and parses it with goja's parser, source maps disabled. It returns the
// program, or an *Error saying why the code is refused.
func Prepare(code string, lim Limits) (*Program, error) {
	lim = lim.withDefaults()
	if len(code) > lim.MaxBytes {
		return nil, &Error{Problem: TooLarge, Size: len(code), Limit: lim.MaxBytes}
	}
	if depth := Nesting(code); depth > lim.MaxNesting {
		return nil, &Error{Problem: TooNested, Size: depth, Limit: lim.MaxNesting}
	}
	if m := exportDefault.FindAllStringSubmatchIndex(code, 2); len(m) == 1 {
		// The usual case: one textual match, and the code parses with it
		// rewritten. Anything else (the match sat in a string or a
		// comment, or it is not the declaration) is settled the slow way.
		rewritten, ex := rewrite(code, m[0])
		src := wrap(rewritten, ex.name)
		if prg, err := parse(src); err == nil && declared(prg, ex) {
			return &Program{Source: src, AST: prg, Name: ex.name}, nil
		}
	}
	return prepareSlow(code)
}

// prepareSlow finds the export the way the parser sees it: goja stops at
// the first `export` or `import` keyword that is real code, so each parse
// error at such a keyword is either the one allowed export or a refusal.
func prepareSlow(code string) (*Program, error) {
	var ex *export
	for {
		name := defaultName
		if ex != nil {
			name = ex.name
		}
		src := wrap(code, name)
		prg, err := parse(src)
		if err == nil {
			switch {
			case ex == nil:
				return nil, &Error{Problem: NoExport}
			case !declared(prg, *ex):
				return nil, &Error{Problem: NotTopLevel}
			}
			return &Program{Source: src, AST: prg, Name: ex.name}, nil
		}
		off, word := keywordAt(src, err)
		off -= len(wrapperPrefix)
		if off < 0 || off >= len(code) {
			return nil, syntaxError(code, err)
		}
		line := 1 + strings.Count(code[:off], "\n")
		loc := exportDefault.FindStringSubmatchIndex(code[off:])
		switch {
		case word == "import":
			return nil, &Error{Problem: Import, Line: line}
		case loc == nil || loc[0] != 0:
			return nil, &Error{Problem: OtherExport, Line: line}
		case ex != nil:
			return nil, &Error{Problem: SecondExport, Line: line}
		}
		for i := range loc {
			if loc[i] >= 0 {
				loc[i] += off
			}
		}
		var found export
		code, found = rewrite(code, loc)
		ex = &found
	}
}

// rewrite turns the export that match (submatch indices) found into a plain
// declaration: the words "export default" become spaces (line breaks stay,
// so lines and columns do), and an anonymous function is named __default.
func rewrite(code string, match []int) (string, export) {
	start, end := match[0], match[1]
	b := []byte(code)
	words := strings.Index(code[start:end], "default") + len("default")
	for i := start; i < start+words; i++ {
		if b[i] != '\n' && b[i] != '\r' {
			b[i] = ' '
		}
	}
	paren := end - 1 // the match ends with the parameter list's "("
	ex := export{name: defaultName, start: start, end: paren}
	if match[2] >= 0 {
		ex.name = code[match[2]:match[3]]
		return string(b), ex
	}
	return string(b[:paren]) + " " + defaultName + string(b[paren:]), ex
}

func wrap(code, name string) string {
	return wrapperPrefix + code + "\n;return " + name + "})"
}

// parse reads wrapped source. Source maps are disabled: a sourceMappingURL
// comment must never make the host read a file.
func parse(src string) (*ast.Program, error) {
	return parser.ParseFile(nil, "agent.js", src, 0, parser.WithDisableSourceMaps)
}

// keywordAt returns the offset and the word of the import or export keyword
// the first parse error points at, or -1 when the error is elsewhere.
func keywordAt(src string, err error) (int, string) {
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return -1, ""
	}
	pos := list[0].Position
	f := file.NewFile("", src, 0)
	for _, m := range moduleWord.FindAllStringIndex(src, -1) {
		if p := f.Position(m[0]); p.Line == pos.Line && p.Column == pos.Column {
			return m[0], src[m[0]:m[1]]
		}
	}
	return -1, ""
}

// syntaxError reports the first syntax error with its line in the agent's
// own numbering (the wrapper adds nothing before the first line's code). An
// error past the last line is in the wrapper's closing: the code ended early.
func syntaxError(code string, err error) *Error {
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return &Error{Problem: Syntax, Detail: err.Error()}
	}
	if lines := 1 + strings.Count(code, "\n"); list[0].Position.Line > lines {
		return &Error{Problem: UnexpectedEnd, Line: lines}
	}
	return &Error{Problem: Syntax, Line: list[0].Position.Line, Detail: list[0].Message}
}

// declared reports whether the module itself (not a nested function)
// declares the exported function, and the declaration is the one the
// rewrite made, not another function of the same name.
func declared(prg *ast.Program, ex export) bool {
	for _, st := range body(prg) {
		d, ok := st.(*ast.FunctionDeclaration)
		if !ok || d.Function.Name == nil || d.Function.Name.Name.String() != ex.name {
			continue
		}
		if at := int(d.Idx0()) - prg.File.Base() - len(wrapperPrefix); at >= ex.start && at < ex.end {
			return true
		}
	}
	return false
}

// body returns the statements inside the wrapper, or nil if prg is not a
// wrapped program.
func body(prg *ast.Program) []ast.Statement {
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
