package rbac

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/auth"
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
)

// Plugin returns the rbac system plugin. It injects the database, http,
// ORM, collections and identity-admin keys (so it installs after them),
// creates its tables, defines the group, access and rule points (system
// only) and Key and AdminKey (system only), installs itself as the ORM's
// and the collections' guard, and serves the routes under
// /api/auth/groups.
func Plugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1",
			Inject:      []string{contracts.DatabaseKey, smshttp.Key, orm.Key, collections.Key, auth.AdminKey},
			Provide:     []string{Key, AdminKey},
			Points:      []string{smshttp.RoutePoint},
			Description: "Groups, access per model and collection, and record rules: the ORM's and the collections' guard"},
		Activate: activate,
	}
}

func activate(ctx context.Context, c *kernel.Context) error {
	db, err := kernel.Lookup[contracts.Database](c, contracts.DatabaseKey)
	if err != nil {
		return err
	}
	st := store{db: contracts.Ambient(db)}
	if err := st.migrate(ctx); err != nil {
		return err
	}
	s := newService(st)
	if err := s.load(ctx); err != nil {
		return err
	}
	api := c.Kernel()
	if err := define(api, s); err != nil {
		return err
	}
	if err := guard(c, s); err != nil {
		return err
	}
	users, err := kernel.Lookup[auth.Admin](c, auth.AdminKey)
	if err != nil {
		return err
	}
	for _, r := range (&routes{s: s, users: users}).list() {
		if _, err := c.Contribute(smshttp.RoutePoint, r); err != nil {
			return err
		}
	}
	return errors.Join(c.Provide(Key, Service(s)), c.Provide(AdminKey, Admin(s)))
}

// define defines the keys, and the points with their validators and
// observers: an item that would make a group imply itself is refused,
// failing the plugin that contributed it.
func define(api *kernel.API, s *service) error {
	if err := errors.Join(
		api.DefineKey(Key, kernel.KeyMeta{Description: "may a user do this, and to which records (rbac.Service)",
			MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem}),
		api.DefineKey(AdminKey, kernel.KeyMeta{Description: "groups, access and membership as data (rbac.Admin)",
			MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem}),
	); err != nil {
		return err
	}
	type point struct {
		name, desc string
		parse      func(any) (func(src *sources), func(id string), func(id string), error)
	}
	for _, p := range []point{
		{GroupPoint, "rbac.Group{Name, Implies, Description}: a group of users", s.parseGroup},
		{AccessPoint, "rbac.Access{Group, Model|Collection, Read, Create, Write, Unlink}: what a group may do", s.parseAccess},
		{RulePoint, "rbac.Rule{Name, Model, Groups, Domain, Ops}: the records a group (or everyone) may reach", s.parseRule},
	} {
		parse := p.parse
		err := api.DefinePoint(p.name, kernel.PointMeta{Description: p.desc, MinContributorTrust: kernel.TrustSystem,
			Validate: func(item any) error {
				add, _, _, err := parse(item)
				if err != nil {
					return err
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				_, err = s.trialLocked(add)
				return err
			}})
		if err != nil {
			return err
		}
		err = api.ObservePoint(p.name, kernel.Observer{
			Added: func(x kernel.Contribution) {
				if _, keep, _, err := parse(x.Item); err == nil {
					s.change(func() { keep(x.ID) })
				}
			},
			Removed: func(x kernel.Contribution) {
				if _, _, drop, err := parse(x.Item); err == nil {
					s.change(func() { drop(x.ID) })
				}
			},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// change applies a change to the contributions and rebuilds the policy.
func (s *service) change(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
	_ = s.rebuildLocked() // validated before it was accepted
}

func (s *service) parseGroup(item any) (func(*sources), func(string), func(string), error) {
	g, err := as[Group](item, "a group")
	if err != nil {
		return nil, nil, nil, err
	}
	if err := validGroup(g); err != nil {
		return nil, nil, nil, err
	}
	return func(src *sources) { src.codeGroups = append(src.codeGroups, g) },
		func(id string) { s.codeGroups[id] = g }, func(id string) { delete(s.codeGroups, id) }, nil
}

func (s *service) parseAccess(item any) (func(*sources), func(string), func(string), error) {
	a, err := as[Access](item, "an access")
	if err != nil {
		return nil, nil, nil, err
	}
	if err := validAccess(a); err != nil {
		return nil, nil, nil, err
	}
	return func(src *sources) { src.codeAccess = append(src.codeAccess, a) },
		func(id string) { s.codeAccess[id] = a }, func(id string) { delete(s.codeAccess, id) }, nil
}

func (s *service) parseRule(item any) (func(*sources), func(string), func(string), error) {
	r, err := as[Rule](item, "a rule")
	if err != nil {
		return nil, nil, nil, err
	}
	if err := validRule(r); err != nil {
		return nil, nil, nil, err
	}
	return func(src *sources) { src.rules = append(src.rules, r) },
		func(id string) { s.rules[id] = r }, func(id string) { delete(s.rules, id) }, nil
}

// as reads an item as a T: a T itself, or its JSON shape (a declarative
// contribution), unknown fields refused.
func as[T any](item any, what string) (T, error) {
	if v, ok := item.(T); ok {
		return v, nil
	}
	var v T
	raw, err := json.Marshal(item)
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		err = dec.Decode(&v)
	}
	if err != nil {
		return v, fmt.Errorf("%w: %s is %T or its JSON shape: %w", ErrInvalid, what, v, err)
	}
	return v, nil
}

// guard installs s as the ORM's and the collections' guard, removed when
// the plugin is undone.
func guard(c *kernel.Context, s *service) error {
	o, err := kernel.Lookup[orm.Service](c, orm.Key)
	if err != nil {
		return err
	}
	remove, err := o.SetGuard(ormGuard{s})
	if err != nil {
		return err
	}
	if err := c.OnUndo("the ORM's guard", func() error { remove(); return nil }); err != nil {
		remove()
		return err
	}
	col, err := kernel.Lookup[collections.Service](c, collections.Key)
	if err != nil {
		return err
	}
	removeCol, err := col.SetGuard(collectionGuard{s})
	if err != nil {
		return err
	}
	return c.OnUndo("the collections' guard", func() error { removeCol(); return nil })
}
