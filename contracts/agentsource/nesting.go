package agentsource

import "strings"

// Nesting returns the deepest nesting of brackets in code, skipping string
// literals and comments; `${` in a template literal counts as a bracket.
// Regular expression literals are not recognised: brackets inside one
// count too, and a quote inside one is taken for the start of a string, so
// for such code the result can be too low (`/'/` hides the brackets up to
// the next quote). The limit bounds the nesting of ordinary code; the size
// limit bounds the rest.
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
