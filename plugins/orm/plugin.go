package orm

import (
	"context"
	"slices"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// PluginID is the id of the ORM system plugin.
const PluginID = "sms.orm"

// Options configure the plugin. Every field is optional.
type Options struct {
	// Now is the clock for created_at, updated_at and the $now and $today
	// defaults; the default is time.Now.
	Now func() time.Time
	// ContextOf says who a request or chat turn acts for, from the context
	// it is served with (which carries the http.Principal). REST calls and
	// UserKey use it, and so does the Service for a ctx that carries no
	// OpContext. It must never answer Sudo. The default answers the
	// anonymous OpContext, so only the guard decides.
	ContextOf func(ctx context.Context) OpContext
	// RequireGuard refuses every operation but sudo ones while no guard is
	// set, instead of allowing them: with users, an access-control plugin
	// that is not active must close the data, never open it.
	RequireGuard bool
	// ActAs, when set, says who an agent plugin's hooks act for: the
	// context a hook of plugin runs with (the person who asked for the
	// plugin, with their rights at the time), in place of the writer whose
	// write triggered it. System plugins' hooks keep the writer's context.
	ActAs func(ctx context.Context, plugin string) context.Context
	// UserREST serves the REST API on the application listener too, and
	// admits every user's session whatever its scopes (smshttp.Route.Users):
	// for a kernel with users, whose guard decides what each may do.
	// Without it the REST API is the admin listener's alone.
	UserREST bool
	// ReadBudget is the estimated bytes all reads in flight may hold at
	// once (DefaultReadBudget when zero): a read that does not fit beside
	// the others is refused at once with ErrBusy, never made to wait.
	ReadBudget int64
	// Objects bound the files of binary fields (zero fields take the
	// defaults in ObjectLimits).
	Objects ObjectLimits
}

// Plugin returns the ORM system plugin with default options.
func Plugin() kernel.Plugin { return New(Options{}) }

// New returns the ORM system plugin. It injects the database and http
// keys, defines Key (system only), UserKey (agent consumers) and the five
// points (open to agent plugins), and serves the REST API under /api/orm.
func New(opts Options) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1",
			Inject:      []string{contracts.DatabaseKey, smshttp.Key},
			Optional:    []string{contracts.ObjectsKey},
			Provide:     []string{Key, UserKey},
			Points:      []string{smshttp.RoutePoint},
			Description: "Models in tables m_<name> with relations, domains, grouped reads and a REST API"},
		Activate: func(ctx context.Context, c *kernel.Context) error { return activate(c, opts) },
	}
}

func activate(c *kernel.Context, opts Options) error {
	db, err := kernel.Lookup[contracts.Database](c, contracts.DatabaseKey)
	if err != nil {
		return err
	}
	s, err := newService(db, opts, c.Logger())
	if err != nil {
		return err
	}
	api := c.Kernel()
	s.spend = api.Spend
	s.files.store = func() (contracts.ObjectStore, bool) {
		v, err := api.GetValue(contracts.ObjectsKey)
		st, ok := v.(contracts.ObjectStore)
		return st, err == nil && ok
	}
	s.isSystem = func(plugin string) bool {
		v, ok := api.Fiber(plugin)
		return ok && v.Trust == kernel.TrustSystem
	}
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()
	if err := s.createMeta(ctx); err != nil {
		return err
	}
	if err := define(api, s); err != nil {
		return err
	}
	if err := observe(api, s); err != nil {
		return err
	}
	s.live.Store(true)
	if err := c.OnUndo("orm service", func() error { s.live.Store(false); return nil }); err != nil {
		return err
	}
	for _, r := range append(s.routes(), s.objectRoutes()...) {
		if _, err := c.Contribute(smshttp.RoutePoint, r); err != nil {
			return err
		}
	}
	if err := c.Provide(Key, Service(s)); err != nil {
		return err
	}
	return c.Provide(UserKey, userService{s: s})
}

func define(api *kernel.API, s *service) error {
	write := []string{contracts.CapDBWrite}
	keys := []struct {
		name string
		meta kernel.KeyMeta
	}{
		{Key, kernel.KeyMeta{Description: "models and records (orm.Service); can act as sudo, so system only",
			MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem}},
		{UserKey, kernel.KeyMeta{Description: "invoke search, search_read, count, read, create, write, unlink, read_group, call, spec, models: the ORM as the user being served",
			MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustAgent, Requires: []string{contracts.CapDBRead},
			Methods: map[string][]string{"create": write, "write": write, "unlink": write, "call": write},
			Reaches: []string{contracts.CapDBRead, contracts.CapDBWrite}}},
	}
	for _, k := range keys {
		if err := api.DefineKey(k.name, k.meta); err != nil {
			return err
		}
	}
	points := []struct {
		name, desc string
		validate   func(plugin string, item any) error
	}{
		{ModelPoint, "{name, fields: {name: {kind, ...}}, displayField?, order?}: a model stored in table m_<name>", s.validateModel},
		{FieldPoint, "{model, name, field: {kind, ...}}: one more field of a model", s.validateField},
		{MethodPoint, "{model, name, handler(env, ids, {records, args})}: a model method", s.validateMethod},
		{HookPoint, "{model, on: create|write|unlink, when?: before|after, handler(change)}", func(_ string, item any) error { _, err := parseHook(item); return err }},
		{OnchangePoint, "{model, field, handler({values})}: what a form changes when field does", func(_ string, item any) error { _, err := parseOnchange(item); return err }},
	}
	for _, p := range points {
		if err := api.DefinePoint(p.name, kernel.PointMeta{Description: p.desc, ValidateFrom: p.validate, Requires: []string{contracts.CapDBSchema}}); err != nil {
			return err
		}
	}
	return nil
}

// validateModel checks a model's shape and, while the service is live,
// that it clashes with no live declaration, takes over no table another
// plugin made (for agent plugins) and migrates: a trial migration that
// is rolled back, so a contribution changes nothing until it is accepted.
func (s *service) validateModel(plugin string, item any) error {
	m, err := parseModel(item)
	if err != nil || !s.live.Load() {
		return err
	}
	if err := s.reg.checkModel(plugin, m); err != nil {
		return err
	}
	c := claim{plugin: plugin, system: s.isSystem(plugin), table: true}
	for name := range m.Fields {
		c.fields = append(c.fields, name)
	}
	return s.tryProspective(owned[Model]{id: "prospective", plugin: plugin, item: m}, nil, c)
}

func (s *service) validateMethod(plugin string, item any) error {
	m, err := parseMethod(item)
	if err != nil || !s.live.Load() {
		return err
	}
	return s.reg.checkMethod(plugin, m)
}

func (s *service) validateField(plugin string, item any) error {
	fc, err := parseFieldContribution(item)
	if err != nil || !s.live.Load() {
		return err
	}
	if err := s.reg.checkField(plugin, fc); err != nil {
		return err
	}
	system := s.isSystem(plugin)
	if !system {
		if err := s.reg.checkForeignField(plugin, fc); err != nil {
			return err
		}
	}
	c := claim{plugin: plugin, system: system, fields: []string{fc.Name}}
	return s.tryProspective(owned[Model]{}, &owned[FieldContribution]{id: "prospective", plugin: plugin, item: fc}, c)
}

// tryProspective tries the migration of the model a contribution would
// change, as the schema would be with it; the contribution replaces the
// same plugin's live one (a new version of the plugin).
func (s *service) tryProspective(m owned[Model], fc *owned[FieldContribution], c claim) error {
	s.reg.mu.RLock()
	models, fields := append([]owned[Model](nil), s.reg.models...), append([]owned[FieldContribution](nil), s.reg.fields...)
	s.reg.mu.RUnlock()
	name := m.item.Name
	if fc != nil {
		name = fc.item.Model
		fields = slices.DeleteFunc(fields, func(o owned[FieldContribution]) bool {
			return o.plugin == fc.plugin && o.item.Model == name && o.item.Name == fc.item.Name
		})
		fields = append(fields, *fc)
	} else {
		models = slices.DeleteFunc(models, func(o owned[Model]) bool { return o.plugin == m.plugin && o.item.Name == name })
		models = append([]owned[Model]{m}, models...)
	}
	sch := build(contribs{models: models, fields: fields})
	target, ok := sch.models[name]
	if !ok { // a field of a model not declared yet: migrated when it is, but no taking over a kept column now
		return s.checkKept(name, c)
	}
	return s.tryMigrate(target, c)
}

func observe(api *kernel.API, s *service) error {
	system := func(plugin string) bool {
		v, ok := api.Fiber(plugin)
		return ok && v.Trust == kernel.TrustSystem
	}
	obs := []struct {
		point string
		add   func(x kernel.Contribution, sys bool) error
	}{
		{FieldPoint, func(x kernel.Contribution, sys bool) error {
			fc, err := parseFieldContribution(x.Item)
			if err == nil {
				add(&s.reg, &s.reg.fields, owned[FieldContribution]{id: x.ID, plugin: x.Fiber, system: sys, item: fc})
			}
			return err
		}},
		{ModelPoint, func(x kernel.Contribution, sys bool) error {
			m, err := parseModel(x.Item)
			if err == nil {
				add(&s.reg, &s.reg.models, owned[Model]{id: x.ID, plugin: x.Fiber, system: sys, item: m})
			}
			return err
		}},
		{MethodPoint, func(x kernel.Contribution, sys bool) error {
			m, err := parseMethod(x.Item)
			if err == nil {
				add(&s.reg, &s.reg.methods, owned[Method]{id: x.ID, plugin: x.Fiber, system: sys, item: m})
			}
			return err
		}},
		{HookPoint, func(x kernel.Contribution, sys bool) error {
			h, err := parseHook(x.Item)
			if err == nil {
				add(&s.reg, &s.reg.hooks, owned[Hook]{id: x.ID, plugin: x.Fiber, system: sys, item: h})
			}
			return err
		}},
		{OnchangePoint, func(x kernel.Contribution, sys bool) error {
			o, err := parseOnchange(x.Item)
			if err == nil {
				add(&s.reg, &s.reg.onchanges, owned[Onchange]{id: x.ID, plugin: x.Fiber, system: sys, item: o})
			}
			return err
		}},
	}
	for _, o := range obs {
		err := api.ObservePoint(o.point, kernel.Observer{
			Added: func(x kernel.Contribution) {
				if err := o.add(x, system(x.Fiber)); err != nil {
					s.logger.Warn("ORM contribution ignored", "point", o.point, "contribution", x.ID, "plugin", x.Fiber, "error", err)
					return
				}
				s.migrateAll()
			},
			Removed: func(x kernel.Contribution) {
				s.reg.remove(x.ID)
				s.withdrawn(x.Fiber, rolledBack(api.Fiber(x.Fiber)))
			},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// migrateAll migrates every model from an observer, which cannot fail: an
// error is logged and retried by the next call on the model.
func (s *service) migrateAll() {
	for _, m := range s.reg.schema().models {
		if err := s.ensureNow(m); err != nil {
			s.logger.Error("ORM migration failed", "model", m.name, "error", err)
		}
	}
}
