package meta

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sms-baseline/sms/plugins/orm"
)

// checkTimeout bounds the query that checks an action's domain.
const checkTimeout = 5 * time.Second

// checkDomain runs the action's domain once (as sudo, one id at most), so
// an unknown field or operator is refused when the action arrives rather
// than when someone opens it.
func (s *service) checkDomain(a Action) error {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	if _, err := s.orm.Search(orm.Sudo(ctx), a.Model, a.Domain, orm.SearchOptions{Limit: 1, Order: a.Order}); err != nil {
		return invalid("action %s: %v", a.Name, err)
	}
	return nil
}

// readable reports whether the caller ctx serves may read model, asking
// the ORM's guard with a search of one id.
func (s *service) readable(ctx context.Context, model string) (bool, error) {
	_, err := s.orm.Search(ctx, model, nil, orm.SearchOptions{Limit: 1})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, orm.ErrForbidden), errors.Is(err, orm.ErrInvalid):
		return false, nil
	}
	return false, err
}

func (s *service) View(ctx context.Context, model, viewType string) (CompiledView, error) {
	if ok, err := s.readable(ctx, model); err != nil || !ok {
		return CompiledView{}, errors.Join(err, fmt.Errorf("%w: no %s view of model %s", ErrNotFound, viewType, model))
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var primary []entry[View]
	for _, e := range s.views {
		if v := e.item; v.Model == model && v.Type == viewType && v.Inherit == "" {
			primary = append(primary, e)
		}
	}
	if len(primary) == 0 {
		return CompiledView{}, fmt.Errorf("%w: no %s view of model %s", ErrNotFound, viewType, model)
	}
	// A system plugin's view wins: an agent's primary view is only a
	// model's first.
	agent := func(e entry[View]) int {
		if s.isSystem(e.plugin) {
			return 0
		}
		return 1
	}
	slices.SortFunc(primary, func(a, b entry[View]) int {
		return cmp.Or(cmp.Compare(agent(a), agent(b)), byPriority(a.item, b.item))
	})
	return s.compileLocked(primary[0].item)
}

func byPriority(a, b View) int {
	return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Name, b.Name))
}

func (s *service) Views(ctx context.Context, model string) ([]CompiledView, error) {
	out := []CompiledView{}
	for _, t := range ViewTypes {
		v, err := s.View(ctx, model, t)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// compileLocked applies root's extensions, parents before children and
// siblings by priority, then leaves out the fields the model lost.
func (s *service) compileLocked(root View) (CompiledView, error) {
	out := CompiledView{Name: root.Name, Model: root.Model, Type: root.Type, Fields: slices.Clone(root.Fields)}
	children := map[string][]View{}
	for _, e := range s.views {
		if e.item.Inherit != "" {
			children[e.item.Inherit] = append(children[e.item.Inherit], e.item)
		}
	}
	var walk func(name string, depth int)
	walk = func(name string, depth int) {
		if depth > MaxInheritDepth {
			return
		}
		kids := children[name]
		slices.SortFunc(kids, byPriority)
		for _, k := range kids {
			out.Fields = extend(out.Fields, k)
			out.Applied = append(out.Applied, k.Name)
			walk(k.Name, depth+1)
		}
	}
	walk(root.Name, 1)
	spec, err := s.orm.Spec(root.Model)
	if err != nil {
		return CompiledView{}, fmt.Errorf("%w: view %s: model %s is gone", ErrNotFound, root.Name, root.Model)
	}
	have := map[string]bool{}
	for _, f := range spec.Fields {
		have[f.Name] = true
	}
	out.Fields = slices.DeleteFunc(out.Fields, func(f ViewField) bool {
		if !have[f.Name] {
			out.Dropped = append(out.Dropped, f.Name)
		}
		return !have[f.Name]
	})
	return out, nil
}

// extend applies one extension to fields.
func extend(fields []ViewField, ext View) []ViewField {
	at := len(fields)
	if i := slices.IndexFunc(fields, func(f ViewField) bool { return f.Name == ext.After }); ext.After != "" && i >= 0 {
		at = i + 1
	}
	for _, f := range ext.Fields {
		if i := slices.IndexFunc(fields, func(g ViewField) bool { return g.Name == f.Name }); i >= 0 {
			fields[i] = f
			continue
		}
		fields = slices.Insert(fields, at, f)
		at++
	}
	return slices.DeleteFunc(fields, func(f ViewField) bool { return slices.Contains(ext.Remove, f.Name) })
}

func (s *service) Action(ctx context.Context, name string) (Action, error) {
	s.mu.RLock()
	e, ok := s.actions[name]
	s.mu.RUnlock()
	if ok {
		if ok, err := s.readable(ctx, e.item.Model); err != nil || ok {
			return e.item, err
		}
	}
	return Action{}, fmt.Errorf("%w: no action %s", ErrNotFound, name)
}

func (s *service) Actions(ctx context.Context) ([]Action, error) {
	s.mu.RLock()
	all := make([]Action, 0, len(s.actions))
	for _, e := range s.actions {
		all = append(all, e.item)
	}
	s.mu.RUnlock()
	slices.SortFunc(all, func(a, b Action) int { return cmp.Compare(a.Name, b.Name) })
	seen := map[string]bool{}
	out := all[:0]
	for _, a := range all {
		ok, known := seen[a.Model]
		if !known {
			var err error
			if ok, err = s.readable(ctx, a.Model); err != nil {
				return nil, err
			}
			seen[a.Model] = ok
		}
		if ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// Menus answers the tree: entries whose parent is gone, whose action is
// gone or opens a model the caller may not read, and folders left empty
// are left out.
func (s *service) Menus(ctx context.Context) ([]MenuNode, error) {
	actions, err := s.Actions(ctx)
	if err != nil {
		return nil, err
	}
	open := map[string]Action{}
	for _, a := range actions {
		open[a.Name] = a
	}
	s.mu.RLock()
	kids := map[string][]Menu{}
	for _, e := range s.menus {
		kids[e.item.Parent] = append(kids[e.item.Parent], e.item)
	}
	s.mu.RUnlock()
	var build func(parent string, depth int) []MenuNode
	build = func(parent string, depth int) []MenuNode {
		list := kids[parent]
		slices.SortFunc(list, func(a, b Menu) int { return cmp.Or(cmp.Compare(a.Sequence, b.Sequence), cmp.Compare(a.Name, b.Name)) })
		out := []MenuNode{}
		for _, m := range list {
			n := MenuNode{Name: m.Name, Label: cmp.Or(m.Label, m.Name), Action: m.Action}
			if m.Action != "" {
				a, ok := open[m.Action]
				if !ok {
					continue
				}
				n.Model = a.Model
			}
			if depth < MaxMenuDepth {
				n.Children = build(m.Name, depth+1)
			}
			if m.Action == "" && len(n.Children) == 0 {
				continue
			}
			out = append(out, n)
		}
		return out
	}
	return build("", 1), nil
}
