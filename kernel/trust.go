package kernel

import "fmt"

// Trust is a fiber's trust tier. Higher tiers may do everything lower tiers may.
// The zero value is TrustAgent, so zero-valued metadata is the most permissive.
type Trust int

const (
	// TrustAgent is the tier of plugins proposed at run time (by an agent or a
	// user). Agent fibers run behind an Executor and never hold the kernel API.
	TrustAgent Trust = iota
	// TrustSystem is the tier of plugins installed by the composition root. They
	// run in process and receive the system-only API.
	TrustSystem
)

// String returns "agent" or "system".
func (t Trust) String() string {
	switch t {
	case TrustAgent:
		return "agent"
	case TrustSystem:
		return "system"
	default:
		return fmt.Sprintf("trust(%d)", int(t))
	}
}

// MarshalText encodes the tier by name.
func (t Trust) MarshalText() ([]byte, error) {
	if t != TrustAgent && t != TrustSystem {
		return nil, fmt.Errorf("unknown trust tier %d", int(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText decodes "agent" or "system".
func (t *Trust) UnmarshalText(b []byte) error {
	switch string(b) {
	case "agent":
		*t = TrustAgent
	case "system":
		*t = TrustSystem
	default:
		return fmt.Errorf("unknown trust tier %q (want agent or system)", b)
	}
	return nil
}

// KeyMeta is the trust metadata of a key.
type KeyMeta struct {
	// Description says what the key's value is for.
	Description string `json:"description,omitempty"`
	// MinProviderTrust is the least trust a fiber needs to provide the key.
	MinProviderTrust Trust `json:"minProviderTrust"`
	// MinConsumerTrust is the least trust a fiber needs to read or invoke it.
	MinConsumerTrust Trust `json:"minConsumerTrust"`
	// Requires names the capabilities a fiber needs to read or invoke the
	// key; declaring the key in inject or optional gives them to it.
	Requires []string `json:"requires,omitempty"`
	// Methods names, per method, the capabilities invoking that method
	// needs besides Requires. Only a plugin that declares them (in its
	// scopes) may call the method.
	Methods map[string][]string `json:"methods,omitempty"`
	// ProviderRequires names the capabilities a fiber needs to provide it.
	ProviderRequires []string `json:"providerRequires,omitempty"`
	// Reaches names the capabilities the key's service exercises for its
	// caller (the ORM's writes, the chat agent's plugin installs): the
	// edges of the capability graph a search for what agent code can
	// reach walks (Catalog.Reach).
	Reaches []string `json:"reaches,omitempty"`
}

// PointMeta is the metadata of an extension point.
type PointMeta struct {
	// Description says what an item contributed to the point looks like.
	Description string `json:"description,omitempty"`
	// MinContributorTrust is the least trust a fiber needs to contribute.
	MinContributorTrust Trust `json:"minContributorTrust"`
	// Requires names the capabilities a fiber needs to contribute;
	// declaring the point gives them to it.
	Requires []string `json:"requires,omitempty"`
	// Validate, when set, checks an item before it is accepted. A rejected
	// item fails the contributing fiber's activation.
	Validate func(item any) error `json:"-"`
	// ValidateFrom, when set, is used instead of Validate and is also told
	// which plugin contributes, so a point can let a plugin's new version
	// take over the plugin's own items (a route it already serves).
	ValidateFrom func(plugin string, item any) error `json:"-"`
}

// validator returns the point's check for items from plugin, or nil.
func (m PointMeta) validator(plugin string) func(any) error {
	if m.ValidateFrom != nil {
		return func(item any) error { return m.ValidateFrom(plugin, item) }
	}
	return m.Validate
}

// Validator returns the check a point applies to an item from plugin:
// ValidateFrom bound to plugin, else Validate, else nil.
func (m PointMeta) Validator(plugin string) func(any) error { return m.validator(plugin) }
