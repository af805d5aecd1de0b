package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// Plugin returns the auth system plugin. It injects the database and http
// keys, creates its tables, creates opts.Bootstrap's admin when missing,
// provides IdentityKey (agent consumers) and AdminKey (system only),
// contributes the session authenticator and serves the routes under
// /api/auth.
func Plugin(opts Options) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1",
			Inject:      []string{contracts.DatabaseKey, smshttp.Key},
			Provide:     []string{IdentityKey, AdminKey},
			Points:      []string{smshttp.RoutePoint, smshttp.AuthenticatorPoint},
			Description: "Users with argon2id passwords, cookie sessions and the identity keys"},
		Activate: func(ctx context.Context, c *kernel.Context) error { return activate(ctx, c, opts) },
	}
}

func activate(ctx context.Context, c *kernel.Context, opts Options) error {
	if err := opts.Hash.orDefault().valid(); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	db, err := kernel.Lookup[contracts.Database](c, contracts.DatabaseKey)
	if err != nil {
		return err
	}
	st := store{db: db}
	if err := st.migrate(ctx); err != nil {
		return err
	}
	s := newService(st, opts, c.Logger())
	if err := s.bootstrap(ctx, opts.Bootstrap); err != nil {
		return err
	}
	api := c.Kernel()
	if err := errors.Join(
		api.DefineKey(IdentityKey, kernel.KeyMeta{Description: "invoke whoami: the user the request or chat turn serves (auth.Identity)",
			MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustAgent}),
		api.DefineKey(AdminKey, kernel.KeyMeta{Description: "creates and changes users (auth.Admin)",
			MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem}),
	); err != nil {
		return err
	}
	if _, err := c.Contribute(smshttp.AuthenticatorPoint, smshttp.Authenticator{Name: "session", Authenticate: s.authenticate}); err != nil {
		return err
	}
	for _, r := range s.routes() {
		if _, err := c.Contribute(smshttp.RoutePoint, r); err != nil {
			return err
		}
	}
	return errors.Join(c.Provide(IdentityKey, identity{s}), c.Provide(AdminKey, Admin(s)))
}

// identity is the value of IdentityKey: the Identity, and whoami for
// agent code.
type identity struct{ *service }

// Invoke implements kernel.Invoker: "whoami" answers the user the call
// serves, or {"authenticated": false}.
func (i identity) Invoke(ctx context.Context, method string, _ []any) (any, error) {
	if method != "whoami" {
		return nil, smshttp.NewError(smshttp.KindNotFound, fmt.Sprintf("identity has no method %q (only whoami)", method))
	}
	u, ok := i.WhoAmI(ctx)
	if !ok {
		return map[string]any{"authenticated": false}, nil
	}
	return map[string]any{"authenticated": true, "id": u.ID, "login": u.Login, "admin": u.Admin}, nil
}
