package baseline

import (
	"context"
	"strings"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/auth"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// actAs is who an agent plugin's scheduled jobs and ORM hooks act for,
// with users on: the person who asked for the plugin's installed version
// (FiberView.RequestedBy), with their rights at the time the job or hook
// runs. A user is resolved through the identity key (a deactivated user
// acts as nobody); a credential is its configured scopes; anyone else
// (the chat agent of an open API, a name no longer configured) is
// anonymous, whom the guard refuses, and so is a plugin no longer
// installed.
func (b *Baseline) actAs(ctx context.Context, plugin string) context.Context {
	v, ok := b.Kernel.Fiber(plugin)
	if !ok { // gone (uninstalled while its work ran): it acts for nobody
		return smshttp.WithPrincipal(ctx, smshttp.Principal{})
	}
	if v.Trust != kernel.TrustAgent {
		return ctx
	}
	return smshttp.WithPrincipal(ctx, b.principalOf(ctx, v.RequestedBy))
}

func (b *Baseline) principalOf(ctx context.Context, who string) smshttp.Principal {
	if login, ok := strings.CutPrefix(who, smshttp.UserPrefix); ok {
		if id, err := b.Kernel.GetValue(auth.IdentityKey); err == nil {
			if p, ok := id.(auth.Identity).PrincipalOf(ctx, login); ok {
				return p
			}
		}
		return smshttp.Principal{}
	}
	if h, err := b.Kernel.GetValue(smshttp.Key); err == nil && who != "" {
		if p, ok := h.(smshttp.Service).Credential(who); ok {
			return p
		}
	}
	return smshttp.Principal{}
}
