package contracts

// The product's capabilities (kernel.KeyMeta.Requires and the others):
// what a plugin may do, declared by the keys and points it uses and the
// scopes it names, granted by the person it is written for, and checked by
// the kernel on every call.
const (
	// CapDBRead reads records: the ORM as its user, collections, views.
	CapDBRead = "db.read"
	// CapDBWrite creates, writes and deletes records, and calls model
	// methods that may: a plugin declares it in its scopes to use those
	// methods.
	CapDBWrite = "db.write"
	// CapDBSchema defines models, fields, model methods, hooks, onchanges,
	// collections and audit tracking.
	CapDBSchema = "db.schema"
	// CapHTTPRoute serves HTTP routes.
	CapHTTPRoute = "http.route"
	// CapSchedule runs scheduled jobs.
	CapSchedule = "schedule"
	// CapAutomation defines automations, which act on records by
	// themselves when they fire.
	CapAutomation = "automation"
	// CapAgentTool gives the chat agent tools and sections of its prompt.
	CapAgentTool = "agent.tool"
	// CapUI defines views, actions and menus.
	CapUI = "ui"
	// CapNet reaches the network (the scope the judge's policy weighs).
	CapNet = "net"
	// CapModelComplete calls the tenant's model.
	CapModelComplete = "model.complete"
	// CapPluginInstall submits, approves, enables and uninstalls plugins.
	// It is a system capability: the judge refuses any agent plugin that
	// declares it, and no key agent code reaches exercises it.
	CapPluginInstall = "plugin.install"
)

// Capability describes one capability.
type Capability struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// System: only system plugins hold it; no requester can grant it.
	System bool `json:"system,omitempty"`
}

// Capabilities lists the product's capabilities, for docs, the admin API
// and the tests that keep them in step with the keys and points.
var Capabilities = []Capability{
	{CapDBRead, "read records: the ORM as its user, collections, views", false},
	{CapDBWrite, "create, write and delete records, and call model methods", false},
	{CapDBSchema, "define models, fields, model methods, hooks, onchanges, collections and audit tracking", false},
	{CapHTTPRoute, "serve HTTP routes", false},
	{CapSchedule, "run scheduled jobs", false},
	{CapAutomation, "define automations that act on records when they fire", false},
	{CapAgentTool, "give the chat agent tools and prompt sections", false},
	{CapUI, "define views, actions and menus", false},
	{CapNet, "reach the network", false},
	{CapModelComplete, "call the tenant's model", false},
	{CapPluginInstall, "submit, approve, enable and uninstall plugins", true},
}

// SystemCapabilities names the capabilities no agent plugin may hold.
func SystemCapabilities() []string {
	var out []string
	for _, c := range Capabilities {
		if c.System {
			out = append(out, c.Name)
		}
	}
	return out
}
