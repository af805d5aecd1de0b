package baseline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/audit"
	"github.com/sms-baseline/sms/plugins/automation"
	"github.com/sms-baseline/sms/plugins/console"
	"github.com/sms-baseline/sms/plugins/meta"
	"github.com/sms-baseline/sms/plugins/rpc"
)

// The optional system plugins, by the names Options.Services,
// `manager kernel --services` and a Tenant's spec.systemPlugins take.
const (
	ServiceAudit      = "audit"
	ServiceAutomation = "automation"
	ServiceMeta       = "meta"
	ServiceRPC        = "rpc"
	ServiceConsole    = "console"
)

// Services lists the optional system plugins in install order.
var Services = []string{ServiceAudit, ServiceAutomation, ServiceMeta, ServiceRPC, ServiceConsole}

// ServiceOptions configure the optional system plugins that are on.
type ServiceOptions struct {
	// Audit configures the audit plugin (its rbac group).
	Audit audit.Options
	// Automation configures the automation plugin (its time limit per run).
	Automation automation.Options
	// RPC configures /api/rpc (its bounds).
	RPC rpc.Options
	// Console configures the console page (its stylesheet).
	Console console.Options
}

// CheckServices refuses an unknown or repeated service name, naming the
// valid ones.
func CheckServices(names []string) error {
	for i, n := range names {
		if !slices.Contains(Services, n) {
			return fmt.Errorf("unknown system plugin %q: the optional system plugins are %s", n, strings.Join(Services, ", "))
		}
		if slices.Contains(names[:i], n) {
			return fmt.Errorf("system plugin %q listed twice", n)
		}
	}
	return nil
}

// services returns the optional system plugins opts turns on, in install
// order. With users on, their routes are served to users as the ORM's
// are, and agent automations act for their requesters.
func services(opts Options, actAs func(context.Context, string) context.Context) []kernel.Plugin {
	on := func(name string) bool { return slices.Contains(opts.Services, name) }
	users := opts.Auth != nil
	var out []kernel.Plugin
	if on(ServiceAudit) {
		a := opts.ServiceOptions.Audit
		a.Users = a.Users || users
		out = append(out, audit.Plugin(a))
	}
	if on(ServiceAutomation) {
		a := opts.ServiceOptions.Automation
		if a.ActAs == nil {
			a.ActAs = actAs
		}
		out = append(out, automation.Plugin(a))
	}
	if on(ServiceMeta) {
		out = append(out, meta.Plugin())
	}
	if on(ServiceRPC) {
		r := opts.ServiceOptions.RPC
		r.Users = r.Users || users
		out = append(out, rpc.Plugin(r))
	}
	if on(ServiceConsole) {
		out = append(out, console.Plugin(opts.ServiceOptions.Console))
	}
	return out
}

// ObjectsPluginID is the id of the plugin that provides
// contracts.ObjectsKey.
const ObjectsPluginID = "sms.objects"

// objectsPlugin defines contracts.ObjectsKey and provides st under it, when
// there is one.
func objectsPlugin(st contracts.ObjectStore) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: ObjectsPluginID, Version: "1", Provide: []string{contracts.ObjectsKey},
			Description: "Provides the tenant's object store, when it has one"},
		Activate: func(_ context.Context, c *kernel.Context) error {
			if err := c.Kernel().DefineKey(contracts.ObjectsKey, contracts.ObjectsKeyMeta); err != nil {
				return err
			}
			if st == nil {
				return nil
			}
			return c.Provide(contracts.ObjectsKey, st)
		},
	}
}
