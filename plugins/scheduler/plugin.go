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
func Plugin() kernel.Plugin { return New(Options{}) }

// Options configure the plugin. Every field is optional.
type Options struct {
	// ActAs, when set, says who an agent plugin's jobs act for: the
	// context a job of plugin runs with (the person who asked for the
	// plugin, with their rights at the time the job runs). System
	// plugins' jobs keep the tick's context.
	ActAs func(ctx context.Context, plugin string) context.Context
}

// New returns the scheduler system plugin with opts.
func New(opts Options) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1",
			Inject: []string{contracts.DatabaseKey}, Optional: []string{contracts.BudgetKey}, Provide: []string{Key},
			Description: "Runs contributed jobs at fixed intervals when ticked"},
		Activate: func(ctx context.Context, c *kernel.Context) error { return activate(ctx, c, opts) },
	}
}

func activate(ctx context.Context, c *kernel.Context, opts Options) error {
	db, err := kernel.Lookup[contracts.Database](c, contracts.DatabaseKey)
	if err != nil {
		return err
	}
	api := c.Kernel()
	s := &service{db: db, logger: c.Logger(), actAs: opts.ActAs, system: func(plugin string) bool {
		v, ok := api.Fiber(plugin)
		return ok && v.Trust == kernel.TrustSystem
	}, requester: func(plugin string) string {
		v, _ := api.Fiber(plugin)
		return v.RequestedBy
	}, budgets: func() contracts.Budgets {
		v, _ := api.GetValue(contracts.BudgetKey)
		b, _ := v.(contracts.Budgets)
		return b
	}}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	err = api.DefineKey(Key, kernel.KeyMeta{Description: "runs due scheduled jobs (scheduler.Service)",
		MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem})
	if err != nil {
		return err
	}
	err = api.DefinePoint(SchedulePoint, kernel.PointMeta{
		Description: "{name, everyMs, handler}: a job run every everyMs milliseconds (at least 1000) when the scheduler ticks",
		Requires:    []string{contracts.CapSchedule},
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
