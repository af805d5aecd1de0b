package adminapi

import "net/http"

// PluginID is the id of the admin API plugin.
const PluginID = "sms.adminapi"

// AuthorizerPoint is the system-only point of Authorizer items.
const AuthorizerPoint = "admin-authorizer"

// Authorizer admits a request to the mutating admin routes without the
// bearer token, for example an auth plugin's admin sessions.
type Authorizer struct {
	Name      string
	Authorize func(r *http.Request) bool
}

// Options configure the admin API.
type Options struct {
	// Token is the admin bearer token. Empty leaves mutating routes open.
	Token string
	// Ready reports whether the server is ready to serve; nil means ready
	// once the plugin is active.
	Ready func() error
}
