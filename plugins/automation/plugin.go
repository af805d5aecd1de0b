package automation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/audit"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/scheduler"
)

// Plugin returns the automation system plugin. It injects the database,
// the ORM and the scheduler, reads the audit key when the audit plugin is
// on, creates RunsTable, defines Point and Key, listens to the ORM's
// writes and contributes TickJob to the scheduler.
func Plugin(opts Options) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1",
			Inject:      []string{contracts.DatabaseKey, orm.Key, orm.UserKey, scheduler.Key},
			Optional:    []string{audit.Key},
			Provide:     []string{Key},
			Points:      []string{scheduler.SchedulePoint},
			Description: "Runs actions when records are created, written or unlinked, or every N minutes"},
		Activate: func(ctx context.Context, c *kernel.Context) error { return activate(ctx, c, opts) },
	}
}

// service is the Service of one activation.
type service struct {
	orm     orm.Service
	user    kernel.Invoker // orm.UserKey: the ORM as the user being served
	db      contracts.Database
	api     *kernel.API
	actAs   func(ctx context.Context, plugin string) context.Context
	timeout time.Duration
	now     func() time.Time
	logger  *slog.Logger

	mu   sync.RWMutex
	live []*live                // in contribution order
	kept map[string]*statusCell // statuses of dropped automations, by plugin and name
}

// live is an accepted automation.
type live struct {
	id, plugin string
	a          Automation
	system     bool
	untrack    func()
	q          *queue // an agent plugin's event automation runs on it
	st         *statusCell
}

// statusCell is an automation's status. A plugin the kernel restarts (its
// sandbox stopped) contributes its automations anew; the new contribution
// takes the same cell, so its counts go on, runs of the old one that end
// late included.
type statusCell struct {
	mu     sync.Mutex
	status Status
}

// maxKept bounds the statuses of dropped automations kept for a new
// contribution of the same plugin and name.
const maxKept = 256

func activate(ctx context.Context, c *kernel.Context, opts Options) error {
	db, err := kernel.Lookup[contracts.Database](c, contracts.DatabaseKey)
	if err != nil {
		return err
	}
	o, err := kernel.Lookup[orm.Service](c, orm.Key)
	if err != nil {
		return err
	}
	user, err := kernel.Lookup[kernel.Invoker](c, orm.UserKey)
	if err != nil {
		return err
	}
	s := &service{orm: o, user: user, db: contracts.Ambient(db), api: c.Kernel(), actAs: opts.ActAs, timeout: opts.RunTimeout, now: opts.Now, logger: c.Logger(),
		kept: map[string]*statusCell{}}
	if s.timeout <= 0 {
		s.timeout = DefaultRunTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	if err := errors.Join(
		s.api.DefineKey(Key, kernel.KeyMeta{Description: "the automations and their runs (automation.Service)",
			MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem}),
		s.api.DefinePoint(Point, kernel.PointMeta{Description: "automation.Automation{name, model, trigger: create|write|unlink|time, watch?, filter?, everyMinutes?, action: {kind: method|write|note|handler, ...}}",
			MinContributorTrust: kernel.TrustAgent, ValidateFrom: s.validate, Requires: []string{contracts.CapAutomation}}),
		s.api.ObservePoint(Point, kernel.Observer{Added: s.add, Removed: s.drop}),
	); err != nil {
		return err
	}
	for _, ev := range []orm.Event{orm.EventCreate, orm.EventWrite, orm.EventUnlink} {
		remove := o.On(ev, s.fire)
		if err := c.OnUndo("automation listener", func() error { remove(); return nil }); err != nil {
			return err
		}
	}
	if err := c.OnUndo("automation queues", func() error { s.stopAll(); return nil }); err != nil {
		return err
	}
	if _, err := c.Contribute(scheduler.SchedulePoint, scheduler.Job{Name: TickJob, EveryMs: 60_000, Handler: s.tick}); err != nil {
		return err
	}
	return c.Provide(Key, Service(s))
}

// checkWrite refuses an agent plugin's write or method action unless the
// plugin holds db.write: such an action writes records as its requester,
// which cap.invoke would let it do only with that capability. It checks
// the fiber whose activation contributes (loading); the judge's trial,
// which runs before that fiber exists, is checked when it mounts.
func (s *service) checkWrite(plugin string, a Automation) error {
	if a.Action.Kind != ActWrite && a.Action.Kind != ActMethod {
		return nil
	}
	v, ok := s.api.Fiber(plugin)
	if !ok || v.Trust == kernel.TrustSystem || v.State != kernel.StateLoading {
		return nil
	}
	if missing := kernel.MissingCapabilities(v.Capabilities, []string{contracts.CapDBWrite}); len(missing) > 0 {
		return fmt.Errorf("automation %s: a %s action writes records, which needs the db.write capability: declare it in the plugin's scopes", a.Name, a.Action.Kind)
	}
	return nil
}

func (s *service) isSystem(plugin string) bool {
	v, ok := s.api.Fiber(plugin)
	return ok && v.Trust == kernel.TrustSystem
}

func (s *service) validate(plugin string, item any) error {
	a, err := parse(item)
	if err != nil {
		return err
	}
	if err := s.check(a, s.isSystem(plugin)); err != nil {
		return err
	}
	if err := s.checkWrite(plugin, a); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, l := range s.live {
		if l.a.Name == a.Name && l.plugin != plugin {
			return fmt.Errorf("automation %s exists (plugin %s)", a.Name, l.plugin)
		}
		if l.a.Model == a.Model {
			n++
		}
	}
	if n >= MaxPerModel {
		return fmt.Errorf("automation %s: model %s has %d automations; the limit is %d automations per model", a.Name, a.Model, n, MaxPerModel)
	}
	return nil
}

func (s *service) add(x kernel.Contribution) {
	a, err := parse(x.Item)
	if err != nil {
		s.logger.Warn("Automation ignored", "contribution", x.ID, "plugin", x.Fiber, "error", err)
		return
	}
	l := &live{id: x.ID, plugin: x.Fiber, a: a, system: s.isSystem(x.Fiber)}
	if len(a.Watch) > 0 {
		l.untrack = s.orm.Track(a.Model, a.Watch)
	}
	if !l.system && a.Trigger != OnTime {
		l.q = newQueue(func(j job) { s.run(j.ctx, l, j.ev, j.writer) })
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := x.Fiber + "\x00" + a.Name
	if l.st = s.kept[key]; l.st == nil {
		l.st = &statusCell{}
	}
	delete(s.kept, key)
	l.st.mu.Lock()
	l.st.status.Name, l.st.status.Plugin, l.st.status.Model, l.st.status.Trigger = a.Name, x.Fiber, a.Model, a.Trigger
	l.st.mu.Unlock()
	s.live = append(s.live, l)
}

func (s *service) drop(x kernel.Contribution) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live = slices.DeleteFunc(s.live, func(l *live) bool {
		if l.id != x.ID {
			return false
		}
		l.stop()
		if len(s.kept) >= maxKept {
			clear(s.kept)
		}
		s.kept[l.plugin+"\x00"+l.a.Name] = l.st
		return true
	})
}

func (l *live) stop() {
	if l.untrack != nil {
		l.untrack()
	}
	if l.q != nil {
		l.q.stop()
	}
}

func (s *service) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.live {
		l.stop()
	}
	s.live = nil
}

// matching is the live automations of model with trigger.
func (s *service) matching(model string, t Trigger) []*live {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*live
	for _, l := range s.live {
		if l.a.Model == model && l.a.Trigger == t {
			out = append(out, l)
		}
	}
	return out
}

func (s *service) Statuses(context.Context) ([]Status, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Status, 0, len(s.live))
	for _, l := range s.live {
		l.st.mu.Lock()
		out = append(out, l.st.status)
		l.st.mu.Unlock()
	}
	return out, nil
}

func (s *service) Idle(ctx context.Context) error {
	for {
		busy := false
		s.mu.RLock()
		for _, l := range s.live {
			busy = busy || l.q != nil && l.q.busy.Load() > 0
		}
		s.mu.RUnlock()
		if !busy {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
