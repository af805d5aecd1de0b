package scheduler

import (
	"context"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// PluginID is the id of the scheduler system plugin.
const PluginID = "sms.scheduler"

// Plugin returns the scheduler system plugin. It injects the database key,
// creates RunsTable if it is missing, defines the schedule point (open to
// agent plugins) and provides Key, a system-only key whose value is the
// Service.
func Plugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1",
			Inject: []string{contracts.DatabaseKey}, Provide: []string{Key},
			Description: "Runs contributed jobs at fixed intervals when ticked"},
		Activate: activate,
	}
}

func activate(ctx context.Context, c *kernel.Context) error {
	db, err := kernel.Lookup[contracts.Database](c, contracts.DatabaseKey)
	if err != nil {
		return err
	}
	s := &service{db: db, logger: c.Logger()}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	api := c.Kernel()
	err = api.DefineKey(Key, kernel.KeyMeta{Description: "runs due scheduled jobs (scheduler.Service)",
		MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem})
	if err != nil {
		return err
	}
	err = api.DefinePoint(SchedulePoint, kernel.PointMeta{
		Description: "{name, everyMs, handler}: a job run every everyMs milliseconds (at least 1000) when the scheduler ticks",
		Validate:    s.validate,
	})
	if err != nil {
		return err
	}
	err = api.ObservePoint(SchedulePoint, kernel.Observer{
		Added: func(x kernel.Contribution) {
			j, err := parseJob(x.Item)
			if err == nil {
				err = s.reg.add(entry{id: x.ID, plugin: x.Fiber, job: j})
			}
			if err != nil {
				s.logger.Warn("Job ignored", "contribution", x.ID, "plugin", x.Fiber, "error", err)
			}
		},
		Removed: func(x kernel.Contribution) { s.reg.remove(x.ID) },
	})
	if err != nil {
		return err
	}
	return c.Provide(Key, Service(s))
}

// validate checks a job's shape and that no live job has its name.
func (s *service) validate(item any) error {
	j, err := parseJob(item)
	if err != nil {
		return err
	}
	return s.reg.check(j)
}
