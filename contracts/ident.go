package contracts

import (
	"errors"
	"fmt"
	"regexp"
)

// IdentPattern is what a table or column name must match: lowercase ASCII,
// starting with a letter, at most 41 characters. The same names are valid in
// every dialect, need no case folding, and cannot hold a quote, a dot (so no
// schema-qualified name slips through) or whitespace.
const IdentPattern = `^[a-z][a-z0-9_]{0,40}$`

var identRE = regexp.MustCompile(IdentPattern)

// ErrInvalidIdent is wrapped by every error about an identifier that does not
// match IdentPattern.
var ErrInvalidIdent = errors.New("invalid SQL identifier")

// ValidIdent reports whether name matches IdentPattern.
func ValidIdent(name string) bool { return identRE.MatchString(name) }

// CheckIdent returns nil for a valid identifier and otherwise an error that
// wraps ErrInvalidIdent and says what a valid one looks like.
func CheckIdent(name string) error {
	if ValidIdent(name) {
		return nil
	}
	return fmt.Errorf("%w %q: use a lowercase letter followed by up to 40 lowercase letters, digits or underscores (%s)",
		ErrInvalidIdent, name, IdentPattern)
}

// QuoteIdent validates name and returns it double-quoted, ready to splice
// into SQL in either dialect. Quoting keeps names that are SQL keywords
// ("order", "select") usable as table and column names.
func QuoteIdent(name string) (string, error) {
	if err := CheckIdent(name); err != nil {
		return "", err
	}
	return `"` + name + `"`, nil
}
