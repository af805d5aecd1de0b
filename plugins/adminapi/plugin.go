package adminapi

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
	"sync"

	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/agentloop"
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// Plugin returns the admin API plugin. It injects the judge and the http
// service, and contributes its routes to the route point.
func Plugin(opts Options) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1", Inject: []string{judge.Key, smshttp.Key},
			Optional: []string{collections.Key, agentloop.Key}, Description: "The kernel's JSON admin API"},
		Activate: func(_ context.Context, c *kernel.Context) error { return activate(c, opts) },
	}
}

// admin is one activation of the admin API.
type admin struct {
	k     *kernel.Kernel
	judge judge.Service
	http  smshttp.Service
	opts  Options
	ctx   *kernel.Context // reads the optional collections and agent keys when asked

	mu          sync.RWMutex
	authorizers map[string]Authorizer // by contribution id
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
	api := c.Kernel()
	a := &admin{k: api.Kernel, judge: j, http: h, opts: opts, ctx: c, authorizers: map[string]Authorizer{}}
	if err := a.defineAuthorizers(api); err != nil {
		return err
	}
	for _, r := range a.routes() {
		if _, err := c.Contribute(smshttp.RoutePoint, r); err != nil {
			return err
		}
	}
	return nil
}

func (a *admin) defineAuthorizers(api *kernel.API) error {
	err := api.DefinePoint(AuthorizerPoint, kernel.PointMeta{
		Description:         "{name, authorize}: admits requests to mutating admin routes",
		MinContributorTrust: kernel.TrustSystem,
		Validate: func(item any) error {
			if au, ok := item.(Authorizer); !ok || au.Name == "" || au.Authorize == nil {
				return smshttp.Errorf(smshttp.KindValidation, "an admin-authorizer is adminapi.Authorizer{Name, Authorize}")
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	return api.ObservePoint(AuthorizerPoint, kernel.Observer{
		Added: func(x kernel.Contribution) {
			a.mu.Lock()
			a.authorizers[x.ID] = x.Item.(Authorizer)
			a.mu.Unlock()
		},
		Removed: func(x kernel.Contribution) {
			a.mu.Lock()
			delete(a.authorizers, x.ID)
			a.mu.Unlock()
		},
	})
}

// admitted reports whether r may use a mutating route.
func (a *admin) admitted(r *http.Request) bool {
	if a.opts.Token == "" {
		return true
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok &&
		subtle.ConstantTimeCompare([]byte(tok), []byte(a.opts.Token)) == 1 {
		return true
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	for _, au := range a.authorizers {
		if au.Authorize(r) {
			return true
		}
	}
	return false
}

// guard wraps a mutating handler with the token check.
func (a *admin) guard(h smshttp.Handler) smshttp.Handler {
	return func(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
		if !a.admitted(r.Raw) {
			return nil, smshttp.Errorf(smshttp.KindAuth, "this route needs Authorization: Bearer <admin token>")
		}
		return h(ctx, r)
	}
}
