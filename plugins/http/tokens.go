package http

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// tokenFinder finds configured tokens inside untrusted text. It slides a
// rolling hash with a random base over the text and compares a window with
// a token (in constant time) only when their hashes agree, so how long a
// search takes depends on the text's length, not on how much of a token it
// shares with the text.
type tokenFinder struct {
	base    uint64
	lengths []int            // distinct token lengths, ascending
	pow     map[int]uint64   // base^length
	tokens  map[int][]needle // by length
}

// needle is one token and its hash.
type needle struct {
	tok []byte
	sum uint64
}

func newTokenFinder(tokens []string) *tokenFinder {
	var seed [8]byte
	_, _ = rand.Read(seed[:]) // never fails
	f := &tokenFinder{base: binary.LittleEndian.Uint64(seed[:]) | 1, pow: map[int]uint64{}, tokens: map[int][]needle{}}
	for _, t := range tokens {
		n := len(t)
		if n == 0 {
			continue
		}
		if _, ok := f.pow[n]; !ok {
			f.lengths = append(f.lengths, n)
			f.pow[n] = f.power(n)
		}
		f.tokens[n] = append(f.tokens[n], needle{tok: []byte(t), sum: f.hash([]byte(t))})
	}
	slices.Sort(f.lengths)
	return f
}

func (f *tokenFinder) power(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= f.base
	}
	return p
}

func (f *tokenFinder) hash(b []byte) uint64 {
	var h uint64
	for _, c := range b {
		h = h*f.base + uint64(c)
	}
	return h
}

// in reports whether text holds any of the tokens.
func (f *tokenFinder) in(text []byte) bool {
	found := 0
	for _, n := range f.lengths {
		if len(text) < n {
			break
		}
		tokens, base, pow, h := f.tokens[n], f.base, f.pow[n], f.hash(text[:n])
		for i := n; ; i++ {
			for j := range tokens {
				if h == tokens[j].sum {
					found |= subtle.ConstantTimeCompare(text[i-n:i], tokens[j].tok)
				}
			}
			if i == len(text) {
				break
			}
			h = h*base + uint64(text[i]) - pow*uint64(text[i-n])
		}
	}
	return found == 1
}

// inString reports whether s holds any of the tokens.
func (f *tokenFinder) inString(s string) bool { return len(f.lengths) > 0 && f.in([]byte(s)) }

// tokenFinders look for the configured tokens as they are, and in lower
// case for header names and query keys, which agent code sees folded.
// plus holds the ways of reading '+' the search tries: also as a space
// (form decoding) only when some token holds a space, since otherwise
// reading '+' either way can neither make nor hide a token.
type tokenFinders struct {
	exact, folded *tokenFinder
	plus          []bool
}

func newTokenFinders(creds []credential) tokenFinders {
	var exact, folded []string
	plus := []bool{false}
	for _, c := range creds {
		exact, folded = append(exact, c.Token), append(folded, strings.ToLower(c.Token))
		if strings.Contains(c.Token, " ") && len(plus) == 1 {
			plus = append(plus, true)
		}
	}
	return tokenFinders{exact: newTokenFinder(exact), folded: newTokenFinder(folded), plus: plus}
}

// carriesToken says where r, bound for an agent route, carries a configured
// token outside the credential headers (which are taken out, never passed
// on): "" when nowhere. raw is the body as read, body as decoded. Every
// text is also read through the escapes agent code could undo (see holds).
func (f tokenFinders) carriesToken(r *http.Request, raw []byte, body any) string {
	if len(f.exact.lengths) == 0 {
		return ""
	}
	u := r.URL
	switch {
	case f.holds(u.EscapedPath(), false) || f.holds(u.Path, false):
		return "path"
	case f.holds(u.RawQuery, false) || f.inValues(u.Query()):
		return "query"
	case f.inHeaders(r.Header):
		return "headers"
	case f.holds(string(raw), false) || f.inJSON(body):
		return "body"
	}
	return ""
}

// holds reports whether s holds a token as it is, or after agent code
// undoes its JSON and percent escapes (a text body that is JSON after all,
// a form body, a twice-encoded path segment), for up to maxRounds rounds.
// With fold, s is searched in lower case for the folded tokens.
func (f tokenFinders) holds(s string, fold bool) bool {
	v := view{find: f.exact, fold: fold}
	if fold {
		v.find = f.folded
	}
	for _, v.plus = range f.plus {
		if v.holds([]byte(s)) {
			return true
		}
	}
	return false
}

// view is one way of searching text: for which tokens, and how agent code
// may decode it.
type view struct {
	find *tokenFinder
	fold bool // search in lower case
	plus bool // percent decoding reads '+' as a space
}

// sees reports whether b, as it stands, holds a token.
func (v view) sees(b []byte) bool {
	if v.fold {
		b = bytes.ToLower(b)
	}
	return v.find.in(b)
}

// holds reports whether b holds a token at any stage of undoing its
// escapes: as it is, then after each round's JSON and percent decoding,
// until a round changes nothing or maxRounds have run. Each stage is at
// most as long as b, so one view reads at most 2*maxRounds+1 times b's
// length (and the views of holds at most two times that).
func (v view) holds(b []byte) bool {
	if v.sees(b) {
		return true
	}
	for range maxRounds {
		j, jChanged := unescapeJSON(b)
		if jChanged && v.sees(j) {
			return true
		}
		p, pChanged := unescapePercent(j, v.plus)
		if pChanged && v.sees(p) {
			return true
		}
		if !jChanged && !pChanged {
			return false
		}
		b = p
	}
	return false
}

// inValues looks in every key (folded, as handlers see keys) and every
// value, not only the first, and through their escapes.
func (f tokenFinders) inValues(m map[string][]string) bool {
	for k, vs := range m {
		if f.holds(k, true) || slices.ContainsFunc(vs, f.holdsExact) {
			return true
		}
	}
	return false
}

func (f tokenFinders) inHeaders(h http.Header) bool {
	for k, vs := range h {
		if slices.Contains(credentialHeaders, strings.ToLower(k)) {
			continue
		}
		if f.holds(k, true) || slices.ContainsFunc(vs, f.holdsExact) {
			return true
		}
	}
	return false
}

// holdsExact is holds for a text agent code sees as it is.
func (f tokenFinders) holdsExact(s string) bool { return f.holds(s, false) }

// inJSON looks in every string and object key of a decoded body, where
// escapes (\u0041) no longer hide what agent code would read.
func (f tokenFinders) inJSON(v any) bool {
	switch x := v.(type) {
	case string:
		return f.exact.inString(x)
	case []any:
		return slices.ContainsFunc(x, f.inJSON)
	case map[string]any:
		for k, e := range x {
			if f.exact.inString(k) || f.inJSON(e) {
				return true
			}
		}
	}
	return false
}

// refuseTokens refuses a request to an agent route that carries a
// configured token anywhere but the credential headers: agent code must
// never see a credential, and a token elsewhere cannot be taken out
// reliably (a path segment, a body field).
func (f tokenFinders) refuseTokens(r *http.Request, raw []byte, body any) error {
	if where := f.carriesToken(r, raw, body); where != "" {
		return NewError(KindValidation, fmt.Sprintf(
			"the request's %s holds a credential: agent routes never receive credentials, send a token only in the Authorization or X-Admin-Token header", where))

	}
	return nil
}
