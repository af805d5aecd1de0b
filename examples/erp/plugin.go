package erp

import (
	"context"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

// SeedPluginID is the plugin seeding an empty database.
const SeedPluginID = "erp.seed"

// Plugins are the application's system plugins in install order: the
// models, who may do what, the summary route and tool, the screens and
// services (active when the kernel turns audit, automation and meta on),
// and the seed.
func Plugins() []kernel.Plugin {
	return []kernel.Plugin{modelsPlugin(), accessPlugin(), servicePlugin(), screensPlugin(), seedPlugin()}
}

// seedPlugin runs Seed when it mounts, that is at every start.
func seedPlugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: SeedPluginID, Version: "1", Description: "Sample contacts and products in an empty database",
			Inject: []string{orm.Key}},
		Activate: func(ctx context.Context, c *kernel.Context) error {
			svc, err := kernel.Lookup[orm.Service](c, orm.Key)
			if err != nil {
				return err
			}
			return Seed(ctx, svc)
		},
	}
}
