package adminapi

import (
	"context"
	"strings"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/agentloop"
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// Plugin returns the admin API plugin. It injects the judge and the http
// service, and contributes its routes to the route point, each with the
// scope a credential needs to call it.
func Plugin(opts Options) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1", Inject: []string{judge.Key, smshttp.Key},
			Optional: []string{collections.Key, agentloop.Key}, Points: []string{smshttp.RoutePoint, smshttp.ReservedPoint},
			Description: "The kernel's JSON admin API"},
		Activate: func(_ context.Context, c *kernel.Context) error { return activate(c, opts) },
	}
}

// reserved reports whether prefix is already under one of the http
// plugin's default reserved prefixes.
func reserved(prefix string) bool {
	for _, r := range smshttp.DefaultReserved {
		if prefix == r || strings.HasPrefix(prefix, r+"/") {
			return true
		}
	}
	return false
}

// admin is one activation of the admin API.
type admin struct {
	k     *kernel.Kernel
	judge judge.Service
	http  smshttp.Service
	opts  Options
	// versions indexes the agent plugins' committed versions.
	versionIdx versionIndex
	ctx        *kernel.Context // reads the optional collections and agent keys when asked
	cache      stateCache
	streams    *streamLimits
}

func activate(c *kernel.Context, opts Options) error {
	j, err := kernel.Lookup[judge.Service](c, judge.Key)
	if err != nil {
		return err
	}
	h, err := kernel.Lookup[smshttp.Service](c, smshttp.Key)
	if err != nil {
		return err
	}
	if opts.Prefix != "" {
		if err := adminv1.CheckPrefix(opts.Prefix); err != nil {
			return err
		}
		if !reserved(opts.Prefix) {
			if _, err := c.Contribute(smshttp.ReservedPoint, opts.Prefix); err != nil {
				return err
			}
		}
	}
	a := &admin{k: c.Kernel().Kernel, judge: j, http: h, opts: opts, ctx: c, streams: newStreamLimits(opts)}
	for _, r := range a.routes() {
		r.Path = adminv1.Prefixed(r.Path, opts.Prefix)
		if _, err := c.Contribute(smshttp.RoutePoint, r); err != nil {
			return err
		}
	}
	return nil
}
