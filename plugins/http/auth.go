package http

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// authenticate says who r comes from: a configured credential named by
// its bearer token, else an authenticator's principal, else anonymous. An
// authenticator's error refuses the request.
func (s *server) authenticate(r *http.Request) (Principal, error) {
	if tok, ok := bearer(r); ok {
		sum := sha256.Sum256([]byte(tok))
		for _, c := range s.creds {
			if subtle.ConstantTimeCompare(sum[:], c.sum[:]) == 1 {
				return Principal{Authenticated: true, Name: c.Name, Scopes: slices.Clone(c.Scopes)}, nil
			}
		}
	}
	for _, a := range s.authenticators() {
		p, err := a.Authenticate(r)
		if err != nil {
			return Principal{}, err
		}
		if p.Authenticated {
			return p, nil
		}
	}
	return Principal{}, nil
}

// AdminTokenHeader carries a token as Authorization: Bearer does, for
// clients written against the seed's API.
const AdminTokenHeader = "X-Admin-Token"

// bearer returns the token the request presents: Authorization: Bearer,
// else AdminTokenHeader.
func bearer(r *http.Request) (string, bool) {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return tok, true
	}
	if tok := r.Header.Get(AdminTokenHeader); tok != "" {
		return tok, true
	}
	return "", false
}

// Credential implements Service.
func (s *server) Credential(name string) (Principal, bool) {
	for _, c := range s.creds {
		if c.Name == name {
			return Principal{Authenticated: true, Name: c.Name, Scopes: slices.Clone(c.Scopes)}, true
		}
	}
	return Principal{}, false
}

// Secured implements Service.
func (s *server) Secured() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.creds) > 0 || len(s.auths) > 0
}

// admit checks that who may call rt; req is the request as handlers see it.
func (s *server) admit(rt *route, who Principal, req *Request) error {
	if rt.scope == "" || !s.Secured() || rt.public != nil && rt.public(req) || rt.users && who.UserID != 0 {
		return nil
	}
	if !who.Authenticated {
		return NewError(KindAuth, fmt.Sprintf("%s %s needs Authorization: Bearer <token> (or X-Admin-Token) with the %s scope", rt.method, rt.path, rt.scope))
	}
	if !who.Has(rt.scope) {
		return NewError(KindForbidden, fmt.Sprintf("credential %s lacks the %s scope that %s %s needs", who.Name, rt.scope, rt.method, rt.path))
	}
	return nil
}

// credential is a configured credential with its token hashed, so that
// comparing tokens takes the same time whatever their lengths.
type credential struct {
	Credential
	sum [sha256.Size]byte
}

func hashCredentials(list []Credential) []credential {
	out := make([]credential, 0, len(list))
	for _, c := range list {
		if c.Token == "" {
			continue
		}
		out = append(out, credential{Credential: c, sum: sha256.Sum256([]byte(c.Token))})
	}
	return out
}

// credentialHeaders never reach agent code.
var credentialHeaders = []string{"authorization", "proxy-authorization", "cookie", "x-admin-token"}

// forAgent returns the request as an agent handler receives it: no
// credential headers (serve has refused a request holding a configured
// token anywhere else). Raw never crosses to agent code.
func (s *server) forAgent(r *Request) *Request {
	out := *r
	out.Raw = nil
	out.Headers = make(map[string]string, len(r.Headers))
	for k, v := range r.Headers {
		if !slices.Contains(credentialHeaders, k) {
			out.Headers[k] = v
		}
	}
	return &out
}
