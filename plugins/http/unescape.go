package http

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// maxRounds bounds how many rounds of undoing escapes the token search
// reads through on one text (each round undoes JSON escapes, then percent
// escapes), so its cost stays linear in the request's length.
const maxRounds = 4

// jsonEscapes are the one-letter JSON string escapes and what they stand for.
var jsonEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unescapeJSON undoes every well-formed JSON string escape in b, wherever
// it stands (a JSON document, a JSON value inside a form field, stray
// text), and leaves anything else as it is, as JSON.parse or a lenient
// decoder in agent code would. It reports whether it undid any.
func unescapeJSON(b []byte) ([]byte, bool) {
	if bytes.IndexByte(b, '\\') < 0 {
		return b, false
	}
	out, changed := make([]byte, 0, len(b)), false
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if c := jsonEscapes[b[i+1]]; c != 0 {
			out, i, changed = append(out, c), i+1, true
			continue
		}
		if r, end := utf16At(b, i, `\u`); end > 0 {
			out, i, changed = utf8.AppendRune(out, r), end-1, true
			continue
		}
		out = append(out, b[i])
	}
	return out, changed
}

// unescapePercent undoes every well-formed %XX in b, and %uXXXX (which
// JavaScript's unescape reads), leaving malformed ones as they are, as a
// lenient decoder in agent code would; with plus it also reads '+' as a
// space, as form decoding does. It reports whether it changed anything.
func unescapePercent(b []byte, plus bool) ([]byte, bool) {
	if bytes.IndexByte(b, '%') < 0 && (!plus || bytes.IndexByte(b, '+') < 0) {
		return b, false
	}
	out, changed := make([]byte, 0, len(b)), false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '+' && plus:
			out, changed = append(out, ' '), true
		case c != '%':
			out = append(out, c)
		case i+2 < len(b) && ishex(b[i+1]) && ishex(b[i+2]):
			out, i, changed = append(out, unhex(b[i+1])<<4|unhex(b[i+2])), i+2, true
		default:
			if r, end := utf16At(b, i, "%u"); end > 0 {
				out, i, changed = utf8.AppendRune(out, r), end-1, true
				continue
			}
			out = append(out, c)
		}
	}
	return out, changed
}

// utf16At reads the UTF-16 escape prefix+XXXX at b[i:] (and the low half
// that follows a high surrogate) and returns the rune and the index past
// it; end is -1 when none stands there. A lone surrogate reads as U+FFFD,
// as JSON decoders take it.
func utf16At(b []byte, i int, prefix string) (r rune, end int) {
	r, ok := hex4(b, i, prefix)
	if !ok {
		return 0, -1
	}
	end = i + len(prefix) + 4
	if !utf16.IsSurrogate(r) {
		return r, end
	}
	if lo, ok := hex4(b, end, prefix); ok {
		if c := utf16.DecodeRune(r, lo); c != utf8.RuneError {
			return c, end + len(prefix) + 4
		}
	}
	return utf8.RuneError, end
}

// hex4 reads prefix and four hex digits at b[i:].
func hex4(b []byte, i int, prefix string) (rune, bool) {
	if i+len(prefix)+4 > len(b) || string(b[i:i+len(prefix)]) != prefix {
		return 0, false
	}
	var r rune
	for _, c := range b[i+len(prefix) : i+len(prefix)+4] {
		if !ishex(c) {
			return 0, false
		}
		r = r<<4 | rune(unhex(c))
	}
	return r, true
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
