package orm

import (
	"fmt"
	"strings"
)

func (e *Error) Error() string {
	var parts []string
	if e.Model != "" {
		parts = append(parts, "model "+e.Model)
	}
	if e.Field != "" {
		parts = append(parts, "field "+e.Field)
	}
	if e.Term != "" {
		parts = append(parts, "term "+e.Term)
	}
	if len(parts) == 0 {
		return e.Msg
	}
	return strings.Join(parts, " ") + ": " + e.Msg
}

// Unwrap returns the kind, so errors.Is(err, ErrInvalid) works.
func (e *Error) Unwrap() error { return e.Kind }

// at is where an error is: a model and, when one is at fault, a field.
type at struct{ model, field string }

// errorf builds an *Error of kind at loc.
func errorf(kind error, loc at, format string, args ...any) *Error {
	return &Error{Kind: kind, Model: loc.model, Field: loc.field, Msg: fmt.Sprintf(format, args...)}
}
