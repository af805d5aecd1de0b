package sqlstore

import (
	"strconv"
	"strings"
)

// NumberPlaceholders rewrites each ? placeholder in sql to $1, $2, ... in
// order and returns the rewritten text and the number of placeholders. A ?
// inside a single-quoted string (including E'...' strings with backslash
// escapes), a double-quoted identifier, a dollar-quoted string or a comment
// is left alone. A ? directly followed by a digit gets a space after its
// number, so ?0 becomes "$1 0" (a syntax error the engine reports) rather
// than the different parameter $10. Unterminated quotes and comments are copied as they are,
// for the engine to report.
func NumberPlaceholders(sql string) (string, int) {
	if !strings.Contains(sql, "?") {
		return sql, 0
	}
	var b strings.Builder
	b.Grow(len(sql) + 8)
	n := 0
	for i := 0; i < len(sql); {
		end := skipLiteral(sql, i)
		if end > i {
			b.WriteString(sql[i:end])
			i = end
			continue
		}
		if sql[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			if i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9' {
				b.WriteByte(' ') // ?0 must not become $10
			}
		} else {
			b.WriteByte(sql[i])
		}
		i++
	}
	return b.String(), n
}

// skipLiteral returns the end of the string, quoted identifier or comment
// starting at i, or i when none starts there.
func skipLiteral(sql string, i int) int {
	switch c := sql[i]; {
	case c == '\'':
		return skipQuoted(sql, i, '\'', isEscapeString(sql, i))
	case c == '"':
		return skipQuoted(sql, i, '"', false)
	case c == '-' && strings.HasPrefix(sql[i:], "--"):
		if nl := strings.IndexByte(sql[i:], '\n'); nl >= 0 {
			return i + nl + 1
		}
		return len(sql)
	case c == '/' && strings.HasPrefix(sql[i:], "/*"):
		return skipBlockComment(sql, i)
	case c == '$':
		return skipDollarQuoted(sql, i)
	}
	return i
}

// skipQuoted returns the index after the quote closing the one at i; a
// doubled quote is an escaped quote, and so is a backslash-escaped one when
// backslash is set.
func skipQuoted(sql string, i int, quote byte, backslash bool) int {
	for j := i + 1; j < len(sql); j++ {
		switch {
		case backslash && sql[j] == '\\':
			j++
		case sql[j] == quote && j+1 < len(sql) && sql[j+1] == quote:
			j++
		case sql[j] == quote:
			return j + 1
		}
	}
	return len(sql)
}

// isEscapeString reports whether the quote at i opens an E'...' string.
func isEscapeString(sql string, i int) bool {
	if i == 0 || (sql[i-1] != 'E' && sql[i-1] != 'e') {
		return false
	}
	return i == 1 || !isIdentByte(sql[i-2])
}

// skipBlockComment skips a /* */ comment, which nests in Postgres.
func skipBlockComment(sql string, i int) int {
	depth := 0
	for j := i; j < len(sql)-1; j++ {
		switch {
		case sql[j] == '/' && sql[j+1] == '*':
			depth++
			j++
		case sql[j] == '*' && sql[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(sql)
}

// skipDollarQuoted skips $tag$ ... $tag$ (or $$ ... $$). A $ that follows
// an identifier character belongs to the identifier or a $n parameter.
func skipDollarQuoted(sql string, i int) int {
	if i > 0 && isIdentByte(sql[i-1]) {
		return i
	}
	j := i + 1
	for j < len(sql) && sql[j] != '$' {
		if !isIdentByte(sql[j]) || (j == i+1 && sql[j] >= '0' && sql[j] <= '9') {
			return i // not a tag: $1, or a lone $
		}
		j++
	}
	if j >= len(sql) {
		return i
	}
	tag := sql[i : j+1]
	if end := strings.Index(sql[j+1:], tag); end >= 0 {
		return j + 1 + end + len(tag)
	}
	return len(sql)
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
