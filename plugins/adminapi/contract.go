package adminapi

import "github.com/sms-baseline/sms/plugins/adminapi/adminv1"

// PluginID is the id of the admin API plugin.
const PluginID = "sms.adminapi"

// Options configure the admin API. Who may call it is the http plugin's
// business: its credentials and their scopes (http.Options.Credentials)
// and the authenticators contributed to http.AuthenticatorPoint.
type Options struct {
	// Prefix is where the admin API's routes live: /api/state becomes
	// Prefix + /state. Default adminv1.DefaultPrefix (/api); probes and
	// /metrics stay where they are, and so do other plugins' routes under
	// /api. A prefix outside /api is reserved for system routes. Clients
	// follow with adminv1.Client.WithPrefix.
	Prefix string
	// Ready reports whether the server is ready to serve; nil means ready
	// once the plugin is active.
	Ready func() error
	// MaxStreamsPerCredential bounds the streams one credential (or, with
	// the API open, all anonymous callers together) holds open at once:
	// event streams and chat streams count together, since each holds a
	// connection past the server's write timeout. Past it GET
	// /api/events/stream and POST /api/chat/stream are a 429. Default
	// DefaultMaxStreamsPerCredential.
	MaxStreamsPerCredential int
	// MaxStreams bounds the streams, event and chat together, open at once
	// in the kernel. Default DefaultMaxStreams.
	MaxStreams int
	// Tenant names the Tenant the kernel runs for under the operator.
	// Then decisions come through Approval objects, and each approval the
	// API shows says which (adminv1.Approval.Object).
	Tenant *adminv1.TenantRef
}

// The defaults of Options.
const (
	DefaultMaxStreamsPerCredential = 16
	DefaultMaxStreams              = 256
)
