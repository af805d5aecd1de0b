package http

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/kernel"
)

// PluginID is the id of the http system plugin.
const PluginID = "sms.http"

// Plugin returns the http system plugin. It defines the route point (open to
// agent plugins; the judge's policy decides whether one needs approval) and
// provides Key, a system-only key whose value is the Service.
func Plugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1", Provide: []string{Key},
			Description: "Serves contributed routes over HTTP"},
		Activate: activate,
	}
}

func activate(_ context.Context, c *kernel.Context) error {
	api := c.Kernel()
	s := &server{routes: &table{}, logger: c.Logger()}
	err := api.DefineKey(Key, kernel.KeyMeta{Description: "the HTTP handler serving every route",
		MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem})
	if err != nil {
		return err
	}
	err = api.DefinePoint(RoutePoint, kernel.PointMeta{
		Description:  "{method, path, handler}: an HTTP route; path segments may be :params",
		ValidateFrom: s.validate,
	})
	if err != nil {
		return err
	}
	err = api.ObservePoint(RoutePoint, kernel.Observer{
		Added: func(x kernel.Contribution) {
			r, err := parseItem(x.Item)
			if err != nil {
				return // validated on the way in; contributions made before this plugin are skipped
			}
			r.id, r.plugin = x.ID, x.Fiber
			s.routes.add(r)
		},
		Removed: func(x kernel.Contribution) { s.routes.remove(x.ID) },
	})
	if err != nil {
		return err
	}
	return c.Provide(Key, Service(s))
}

// validate checks a route's shape and that no other plugin serves the
// same requests already. A plugin's own routes do not conflict, so its new
// version can take them over when it replaces the old one.
func (s *server) validate(plugin string, item any) error {
	r, err := parseItem(item)
	if err != nil {
		return err
	}
	if x := s.routes.conflict(r); x != nil && x.plugin != plugin {
		return fmt.Errorf("%s %s is already served by plugin %s", r.method, r.path, x.plugin)
	}
	return nil
}
