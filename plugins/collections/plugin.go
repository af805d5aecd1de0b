package collections

import (
	"context"
	"fmt"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// PluginID is the id of the collections system plugin.
const PluginID = "sms.collections"

// Options configure the plugin. Every field is optional.
type Options struct {
	// Now is the clock for created_at and updated_at; the default is time.Now.
	Now func() time.Time
	// RequireGuard refuses REST callers and agent code while no guard is
	// set, instead of letting them through (public collections stay open
	// over REST).
	RequireGuard bool
}

// Plugin returns the collections system plugin with default options.
func Plugin() kernel.Plugin { return New(Options{}) }

// New returns the collections system plugin. It injects the database and
// http keys, defines Key (system providers, agent consumers) and the
// collection, collection-field and collection-hook points (open to agent
// plugins), and serves the REST API on the route point.
func New(opts Options) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1",
			Inject:      []string{contracts.DatabaseKey, smshttp.Key},
			Provide:     []string{Key},
			Points:      []string{smshttp.RoutePoint},
			Description: "Collections of records in tables c_<name>, with a REST API and hooks"},
		Activate: func(ctx context.Context, c *kernel.Context) error { return activate(ctx, c, opts) },
	}
}

func activate(_ context.Context, c *kernel.Context, opts Options) error {
	db, err := kernel.Lookup[contracts.Database](c, contracts.DatabaseKey)
	if err != nil {
		return err
	}
	s, err := newService(db, opts.Now, c.Logger())
	if err != nil {
		return err
	}
	s.requireGuard = opts.RequireGuard
	api := c.Kernel()
	s.spend = api.Spend
	if err := define(api, s); err != nil {
		return err
	}
	if err := observe(api, s); err != nil {
		return err
	}
	s.live.Store(true)
	if err := c.OnUndo("collections service", func() error { s.live.Store(false); return nil }); err != nil {
		return err
	}
	for _, r := range s.routes() {
		if _, err := c.Contribute(smshttp.RoutePoint, r); err != nil {
			return err
		}
	}
	return c.Provide(Key, Service(s))
}

// define defines the key and the three points. Their validators check an
// item's shape and, while s is live, that it does not clash with a live
// contribution and that its table migrates: a contribution whose migration
// fails is rejected, failing the plugin that made it.
func define(api *kernel.API, s *service) error {
	write := []string{contracts.CapDBWrite}
	err := api.DefineKey(Key, kernel.KeyMeta{Description: "records in collections (collections.Service)",
		MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustAgent,
		Requires: []string{contracts.CapDBRead}, Methods: map[string][]string{"create": write, "update": write, "delete": write},
		Reaches: []string{contracts.CapDBRead, contracts.CapDBWrite}})
	if err != nil {
		return err
	}
	points := []struct {
		name, desc string
		validate   func(any) error
	}{
		{FieldPoint, "{collection, field: {name, type, required?, default?}}: one more field of a collection", s.validateField},
		{HookPoint, "{collection, on: create|update|delete, when?: before|after, handler}: runs on writes", validateHook},
	}
	for _, p := range points {
		if err := api.DefinePoint(p.name, kernel.PointMeta{Description: p.desc, Validate: p.validate, Requires: []string{contracts.CapDBSchema}}); err != nil {
			return err
		}
	}
	system := func(plugin string) bool {
		v, ok := api.Fiber(plugin)
		return ok && v.Trust == kernel.TrustSystem
	}
	return api.DefinePoint(CollectionPoint, kernel.PointMeta{
		Description: "{name, fields: [{name, type, required?, default?}], public?}: a collection stored in table c_<name>",
		Requires:    []string{contracts.CapDBSchema},
		ValidateFrom: func(plugin string, item any) error {
			return s.validateCollection(item, system(plugin))
		},
	})
}

// observe keeps the registry in step with the points. Fields and hooks are
// observed first so that each collection already present is migrated once,
// with every field contributed to it.
func observe(api *kernel.API, s *service) error {
	err := api.ObservePoint(FieldPoint, kernel.Observer{
		Added: func(x kernel.Contribution) {
			fc, err := parseFieldContribution(x.Item)
			if err == nil {
				err = s.reg.addField(owned[FieldContribution]{id: x.ID, plugin: x.Fiber, item: fc})
			}
			if err != nil {
				s.logger.Warn("Collection field ignored", "contribution", x.ID, "plugin", x.Fiber, "error", err)
				return
			}
			if def, ok := s.reg.definition(fc.Collection); ok {
				s.migrateLogged(def)
			}
		},
		Removed: func(x kernel.Contribution) { s.reg.remove(x.ID) },
	})
	if err != nil {
		return err
	}
	err = api.ObservePoint(HookPoint, kernel.Observer{
		Added: func(x kernel.Contribution) {
			h, err := parseHook(x.Item)
			if err != nil {
				s.logger.Warn("Collection hook ignored", "contribution", x.ID, "plugin", x.Fiber, "error", err)
				return
			}
			s.reg.addHook(owned[Hook]{id: x.ID, plugin: x.Fiber, item: h})
		},
		Removed: func(x kernel.Contribution) { s.reg.remove(x.ID) },
	})
	if err != nil {
		return err
	}
	return api.ObservePoint(CollectionPoint, kernel.Observer{
		Added: func(x kernel.Contribution) {
			c, err := parseCollection(x.Item)
			if err == nil {
				err = s.reg.addCollection(owned[Collection]{id: x.ID, plugin: x.Fiber, item: c})
			}
			if err != nil {
				s.logger.Warn("Collection ignored", "contribution", x.ID, "plugin", x.Fiber, "error", err)
				return
			}
			if def, ok := s.reg.definition(c.Name); ok {
				s.migrateLogged(def)
			}
		},
		Removed: func(x kernel.Contribution) { s.reg.remove(x.ID) },
	})
}

// migrateLogged migrates from an observer, which cannot fail: an error is
// logged and the migration is retried by the next call on the collection.
func (s *service) migrateLogged(def Collection) {
	if err := s.ensureNow(def); err != nil {
		s.logger.Error("Collection migration failed", "collection", def.Name, "error", err)
	}
}

func (s *service) validateCollection(item any, system bool) error {
	c, err := parseCollection(item)
	if err != nil {
		return err
	}
	if c.Public && !system {
		return fmt.Errorf("collection %s: only system plugins may declare a collection public; "+
			"expose data through a route instead, which waits for a human", c.Name)
	}
	if !s.live.Load() {
		return nil
	}
	if err := s.reg.checkCollection(c); err != nil {
		return err
	}
	return s.ensureNow(s.reg.prospective(c))
}

func (s *service) validateField(item any) error {
	fc, err := parseFieldContribution(item)
	if err != nil || !s.live.Load() {
		return err
	}
	if err := s.reg.checkField(fc); err != nil {
		return err
	}
	if def, ok := s.reg.prospectiveField(fc); ok {
		return s.ensureNow(def)
	}
	return nil // applied when the collection is contributed
}

func validateHook(item any) error {
	_, err := parseHook(item)
	return err
}
