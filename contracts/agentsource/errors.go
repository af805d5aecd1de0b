package agentsource

import "fmt"

// Problem names why Prepare refused agent code.
type Problem int

// The problems Prepare reports, in the order it checks for them.
const (
	TooLarge      Problem = iota + 1 // more bytes than Limits.MaxBytes
	TooNested                        // brackets nest deeper than Limits.MaxNesting
	Syntax                           // the parser refused the code
	UnexpectedEnd                    // the code ends inside a bracket, string or comment
	Import                           // an import declaration or an import() call
	OtherExport                      // an export other than the one allowed
	SecondExport                     // a second `export default function`
	NoExport                         // no `export default function` in the code
	NotTopLevel                      // the export is not a declaration of the module itself
)

// Error is agent code refused by Prepare: the problem, the line it is on and
// the numbers it broke. Callers word a problem for their own readers through
// its fields; Error gives the package's wording.
type Error struct {
	Problem Problem
	// Line is the line of the agent's code the problem is on, counted from
	// 1 as the author wrote it; 0 when the problem is the code as a whole.
	Line int
	// Size and Limit are the code's bytes (TooLarge) or its deepest nesting
	// (TooNested), and the limit it broke.
	Size, Limit int
	// Detail is the parser's message for Syntax.
	Detail string
}

// The export the code must have, as the messages name it.
const wantExport = "`export default async function activate(cap)`"

// Error words the refusal the package's way, naming the line first.
func (e *Error) Error() string {
	switch e.Problem {
	case TooLarge:
		return fmt.Sprintf("%d bytes exceeds the limit of %d", e.Size, e.Limit)
	case TooNested:
		return fmt.Sprintf("brackets nest %d levels deep, more than the limit of %d", e.Size, e.Limit)
	case UnexpectedEnd:
		return e.at("Unexpected end of input (a bracket, string or comment is not closed)")
	case Import:
		return e.at("import is not supported; agent code reaches everything through cap")
	case OtherExport:
		return e.at("the only export allowed is " + wantExport)
	case SecondExport:
		return e.at("only one export is allowed")
	case NoExport:
		return "no " + wantExport + " found"
	case NotTopLevel:
		return "the export must be a top-level " + wantExport
	}
	return e.at(e.Detail)
}

// at prefixes msg with the line, when the error has one.
func (e *Error) at(msg string) string {
	if e.Line <= 0 {
		return msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, msg)
}
