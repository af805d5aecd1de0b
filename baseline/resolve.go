package baseline

import (
	"net"
	"net/http"
	"slices"
	"strings"
)

// A Resolver names the tenant a request is for, or "" for none (the pool
// then answers with PoolOptions.OnMissing). Any function of the request
// will do, such as one reading the organisation from a verified token.
type Resolver func(r *http.Request) string

// TenantFromHeader resolves the tenant from the request header (default
// TenantHeader), or else fallback.
func TenantFromHeader(header, fallback string) Resolver {
	if header == "" {
		header = TenantHeader
	}
	return func(r *http.Request) string {
		if t := r.Header.Get(header); t != "" {
			return t
		}
		return fallback
	}
}

// SubdomainOptions configure TenantFromSubdomain.
type SubdomainOptions struct {
	// Root is the domain tenants are subdomains of: with example.com,
	// acme.example.com is acme, and a host under no root names no tenant.
	// Empty: the first label of any host with three labels or more
	// (acme.example.com), as the pool did by default.
	Root string
	// Fallback is the tenant of the bare root, of localhost and of IP
	// addresses: local development without DNS. Default: none.
	Fallback string
	// Reserved labels are not tenants (www, api): a request for one names
	// no tenant.
	Reserved []string
}

// TenantFromSubdomain resolves the tenant from the label of the request's
// host under o.Root. acme.localhost is acme, for local development.
func TenantFromSubdomain(o SubdomainOptions) Resolver {
	root := strings.ToLower(strings.TrimSuffix(o.Root, "."))
	return func(r *http.Request) string {
		host := strings.ToLower(strings.TrimSuffix(hostOnly(r.Host), "."))
		if net.ParseIP(host) != nil || host == "localhost" || (root != "" && host == root) {
			return o.Fallback
		}
		label, rest, ok := strings.Cut(host, ".")
		switch {
		case !ok || label == "":
			return ""
		case rest == "localhost":
		case root != "" && rest != root:
			return ""
		case root == "" && !strings.Contains(rest, "."):
			return "" // example.com: a bare domain
		}
		if slices.Contains(o.Reserved, label) {
			return ""
		}
		return label
	}
}

// FirstOf tries resolvers in order and returns the first tenant named.
func FirstOf(resolvers ...Resolver) Resolver {
	return func(r *http.Request) string {
		for _, res := range resolvers {
			if t := res(r); t != "" {
				return t
			}
		}
		return ""
	}
}

func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}
