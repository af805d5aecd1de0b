package rpc

import (
	"context"
	"errors"
	"net/http"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/meta"
	"github.com/sms-baseline/sms/plugins/orm"
)

// Plugin returns the RPC system plugin. It injects the database (for the
// write batches' transaction), http and the ORM's user key, reads the meta
// key when the meta plugin is on, and serves Path and MetaPath.
func Plugin(opts Options) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1",
			Inject:      []string{contracts.DatabaseKey, smshttp.Key, orm.UserKey},
			Optional:    []string{meta.Key},
			Points:      []string{smshttp.RoutePoint},
			Description: "Batches of ORM and meta calls in one round trip (JSON-RPC 2.0); a batch that writes is one transaction"},
		Activate: func(_ context.Context, c *kernel.Context) error { return activate(c, opts.withDefaults()) },
	}
}

func (o Options) withDefaults() Options {
	if o.MaxCalls <= 0 {
		o.MaxCalls = DefaultMaxCalls
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.PerCaller <= 0 {
		o.PerCaller = DefaultPerCaller
	}
	if o.PerKernel <= 0 {
		o.PerKernel = DefaultPerKernel
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.TxTimeout <= 0 || o.TxTimeout > o.Timeout {
		o.TxTimeout = min(DefaultTxTimeout, o.Timeout)
	}
	return o
}

func activate(c *kernel.Context, opts Options) error {
	db, err := kernel.Lookup[contracts.Database](c, contracts.DatabaseKey)
	if err != nil {
		return err
	}
	users, err := kernel.Lookup[kernel.Invoker](c, orm.UserKey)
	if err != nil {
		return err
	}
	api := c.Kernel()
	s := &server{opts: opts, db: db, orm: users, flight: newFlight(opts.PerCaller, opts.PerKernel),
		meta: func() (kernel.Invoker, bool) {
			v, err := api.GetValue(meta.Key)
			m, ok := v.(kernel.Invoker)
			return m, err == nil && ok
		}}
	route := func(path string, h smshttp.Handler) smshttp.Route {
		return smshttp.Route{Method: http.MethodPost, Path: path, Handler: h, Scope: smshttp.ScopeRead,
			Admin: !opts.Users, Users: opts.Users}
	}
	return errors.Join(
		contribute(c, route(Path, s.serveORM)),
		contribute(c, route(MetaPath, s.serveMeta)),
	)
}

func contribute(c *kernel.Context, r smshttp.Route) error {
	_, err := c.Contribute(smshttp.RoutePoint, r)
	return err
}
