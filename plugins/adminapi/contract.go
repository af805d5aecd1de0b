package adminapi

// PluginID is the id of the admin API plugin.
const PluginID = "sms.adminapi"

// Options configure the admin API. Who may call it is the http plugin's
// business: its credentials and their scopes (http.Options.Credentials)
// and the authenticators contributed to http.AuthenticatorPoint.
type Options struct {
	// Ready reports whether the server is ready to serve; nil means ready
	// once the plugin is active.
	Ready func() error
}
