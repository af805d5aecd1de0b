package adminv1

import (
	"fmt"
	"strings"
)

// DefaultPrefix is where the admin API's routes live unless the kernel
// says otherwise (adminapi.Options.Prefix): every Route constant under
// /api names its path under this prefix.
const DefaultPrefix = "/api"

// adminRoots are the first segments of the admin API's own routes under
// DefaultPrefix; other routes under /api (the ORM's, the users') belong
// to other plugins and move with no admin prefix.
var adminRoots = []string{"/state", "/catalog", "/plugins", "/approvals", "/chat", "/events"}

// CheckPrefix reports why prefix cannot be an admin prefix: it must be a
// path of one or more segments of letters, digits, '-', '_' and '.',
// starting with '/', with no trailing '/'.
func CheckPrefix(prefix string) error {
	if prefix == "" || prefix[0] != '/' || strings.HasSuffix(prefix, "/") || len(prefix) > 100 {
		return fmt.Errorf("admin prefix %q: want a path such as /api or /sms/admin, with no trailing /", prefix)
	}
	for _, seg := range strings.Split(prefix[1:], "/") {
		if seg == "" || seg == "." || seg == ".." || strings.IndexFunc(seg, notPathChar) >= 0 {
			return fmt.Errorf("admin prefix %q: segment %q: only letters, digits, '-', '_' and '.' are allowed", prefix, seg)
		}
	}
	return nil
}

func notPathChar(r rune) bool {
	letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	return !letter && (r < '0' || r > '9') && r != '-' && r != '_' && r != '.'
}

// Prefixed returns route (a Route constant, or a path made from one) as
// it is served under prefix: an admin API route moves from DefaultPrefix
// to prefix; any other path is returned as it is. An empty prefix is
// DefaultPrefix.
func Prefixed(route, prefix string) string {
	if prefix == "" || prefix == DefaultPrefix {
		return route
	}
	rest, ok := strings.CutPrefix(route, DefaultPrefix)
	if !ok {
		return route
	}
	for _, root := range adminRoots {
		if rest == root || strings.HasPrefix(rest, root+"/") {
			return prefix + rest
		}
	}
	return route
}

// WithPrefix returns a copy of the client for a kernel that serves its
// admin API under prefix (adminapi.Options.Prefix). Routes of other
// plugins, such as the users', keep their paths.
func (c *Client) WithPrefix(prefix string) *Client {
	d := &Client{base: c.base, token: c.token, hc: c.hc, prefix: prefix}
	d.csrf.Store(c.csrf.Load())
	return d
}
