package meta

import (
	"context"
	"errors"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

// Plugin returns the meta system plugin. It injects the ORM, defines the
// view, action and menu points (open to agent plugins) and provides Key.
func Plugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1",
			Inject:      []string{orm.Key},
			Provide:     []string{Key},
			Description: "Views with inheritance, actions and a menu tree over the ORM's models"},
		Activate: activate,
	}
}

func activate(_ context.Context, c *kernel.Context) error {
	o, err := kernel.Lookup[orm.Service](c, orm.Key)
	if err != nil {
		return err
	}
	s := newService(o)
	api := c.Kernel()
	s.isSystem = func(plugin string) bool {
		v, ok := api.Fiber(plugin)
		return ok && v.Trust == kernel.TrustSystem
	}
	if err := api.DefineKey(Key, kernel.KeyMeta{Description: "compiled views, actions and the menu tree (meta.Service; invoke view, views, action, actions, menus)",
		MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustAgent, Requires: []string{contracts.CapDBRead}}); err != nil {
		return err
	}
	points := []struct {
		name, desc string
		add        func(x kernel.Contribution) error
		drop       func(id string)
		check      func(plugin string, item any) error
		named      func(item any) (string, any)
	}{
		{ViewPoint, "meta.View{name, model, type, inherit?, priority?, fields[{name, label?, widget?, readonly?, invisible?, required?}], after?, remove?}",
			s.addView, s.dropView, s.checkView, named[View]},
		{ActionPoint, "meta.Action{name, label?, model, viewType?, domain?, order?}", s.addAction, s.dropAction, s.checkAction, named[Action]},
		{MenuPoint, "meta.Menu{name, label?, parent?, action?, sequence?}", s.addMenu, s.dropMenu, s.checkMenu, named[Menu]},
	}
	for _, p := range points {
		validate := func(plugin string, item any) error {
			if err := p.check(plugin, item); err != nil {
				return err
			}
			name, v := p.named(item)
			s.remember(plugin, p.name, name, v)
			return nil
		}
		err := errors.Join(
			api.DefinePoint(p.name, kernel.PointMeta{Description: p.desc, MinContributorTrust: kernel.TrustAgent, ValidateFrom: validate,
				Requires: []string{contracts.CapUI}}),
			api.ObservePoint(p.name, kernel.Observer{
				Added:   func(x kernel.Contribution) { _ = p.add(x) }, // validated before it was accepted
				Removed: func(x kernel.Contribution) { p.drop(x.ID) },
			}))
		if err != nil {
			return err
		}
	}
	return c.Provide(Key, Service(s))
}

// named decodes a validated item and returns its name.
func named[T interface{ View | Action | Menu }](item any) (string, any) {
	v, _ := kernel.ItemAs[T](item, "an item")
	switch x := any(v).(type) {
	case View:
		return x.Name, x
	case Action:
		return x.Name, x
	case Menu:
		return x.Name, x
	}
	return "", v
}
