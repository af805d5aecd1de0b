package rbac

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/sms-baseline/sms/plugins/orm"
)

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func mapKeys(m map[string]bool) func(func(string) bool) { return maps.Keys(m) }

// validName checks a group's name: 1 to 64 of a-z, 0-9, _ . -.
func validName(what, name string) error {
	ok := name != "" && len(name) <= 64
	for i, c := range []byte(name) {
		ok = ok && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '.' || c == '-'))
	}
	if !ok {
		return fmt.Errorf("%w: %s %q must be 1 to 64 of a-z, 0-9 and _ . - (not first)", ErrInvalid, what, name)
	}
	return nil
}

func validGroup(g Group) error {
	if err := validName("group", g.Name); err != nil {
		return err
	}
	for _, i := range g.Implies {
		if err := validName("implied group", i); err != nil {
			return err
		}
		if i == g.Name {
			return fmt.Errorf("%w: group %s implies itself", ErrInvalid, g.Name)
		}
	}
	if len(g.Description) > 1024 {
		return fmt.Errorf("%w: group %s: a description is at most 1024 bytes", ErrInvalid, g.Name)
	}
	return nil
}

func validAccess(a Access) error {
	if err := validName("group", a.Group); err != nil {
		return err
	}
	if (a.Model == "") == (a.Collection == "") {
		return fmt.Errorf("%w: access of group %s names exactly one of model and collection", ErrInvalid, a.Group)
	}
	if name := cmp.Or(a.Model, a.Collection); len(name) > 128 {
		return fmt.Errorf("%w: access of group %s: a model or collection name is at most 128 bytes", ErrInvalid, a.Group)
	}
	return nil
}

func validRule(r Rule) error {
	if r.Name == "" || len(r.Name) > 128 || r.Model == "" {
		return fmt.Errorf("%w: a rule has a name (at most 128 bytes) and a model", ErrInvalid)
	}
	for _, g := range r.Groups {
		if err := validName("group of rule "+r.Name, g); err != nil {
			return err
		}
	}
	for _, op := range r.Ops {
		if !slices.Contains([]orm.Action{orm.ActionRead, orm.ActionCreate, orm.ActionWrite, orm.ActionUnlink}, op) {
			return fmt.Errorf("%w: rule %s: op %q is not read, create, write or unlink", ErrInvalid, r.Name, op)
		}
	}
	return nil
}

// Groups implements Admin.
func (s *service) Groups(ctx context.Context) ([]GroupInfo, error) {
	members, err := s.st.members(ctx)
	if err != nil {
		return nil, err
	}
	p := s.pol.Load()
	out := make([]GroupInfo, 0, len(p.groups))
	for _, name := range sortedKeys(p.groups) {
		g := p.groups[name]
		out = append(out, GroupInfo{Group: g.Group, Code: g.code, Members: append([]int64{}, members[name]...),
			Access: append([]Access{}, p.access[name]...)})
	}
	return out, nil
}

// CreateGroup implements Admin.
func (s *service) CreateGroup(ctx context.Context, g Group) error {
	if err := validGroup(g); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pol.Load()
	if _, ok := p.groups[g.Name]; ok {
		return fmt.Errorf("%w: group %s exists", ErrConflict, g.Name)
	}
	for _, i := range g.Implies {
		if _, ok := p.groups[i]; !ok {
			return fmt.Errorf("%w: group %s implies %s, which does not exist", ErrInvalid, g.Name, i)
		}
	}
	if _, err := s.trialLocked(func(src *sources) { src.dataGroups = append(src.dataGroups, g) }); err != nil {
		return err
	}
	if err := s.st.insertGroup(ctx, g); err != nil {
		return err
	}
	s.dataGroups = append(s.dataGroups, g)
	return s.rebuildLocked()
}

// DeleteGroup implements Admin.
func (s *service) DeleteGroup(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pol.Load()
	g, ok := p.groups[name]
	switch {
	case !ok:
		return fmt.Errorf("%w: no group %s", ErrNotFound, name)
	case g.code:
		return fmt.Errorf("%w: group %s is contributed by a plugin, not made over the API", ErrConflict, name)
	}
	for _, other := range sortedKeys(p.groups) {
		if slices.Contains(p.groups[other].Implies, name) {
			return fmt.Errorf("%w: group %s implies %s", ErrConflict, other, name)
		}
	}
	if err := s.st.deleteGroup(ctx, name); err != nil {
		return err
	}
	s.dataGroups = slices.DeleteFunc(s.dataGroups, func(x Group) bool { return x.Name == name })
	s.dataAccess = slices.DeleteFunc(s.dataAccess, func(x Access) bool { return x.Group == name })
	s.forget(0)
	return s.rebuildLocked()
}

// member checks that users can be added to group.
func (s *service) member(group string) error {
	p := s.pol.Load()
	if _, ok := p.groups[group]; !ok {
		return fmt.Errorf("%w: no group %s", ErrNotFound, group)
	}
	if group == GroupUser || group == GroupAdmin {
		return fmt.Errorf("%w: every signed-in user is in %s, and admin users in %s: neither takes members", ErrInvalid, GroupUser, GroupAdmin)
	}
	return nil
}

// AddMember implements Admin.
func (s *service) AddMember(ctx context.Context, group string, userID int64) error {
	if err := s.member(group); err != nil {
		return err
	}
	defer s.forget(userID)
	s.forget(userID)
	return s.st.addMember(ctx, group, userID)
}

// RemoveMember implements Admin.
func (s *service) RemoveMember(ctx context.Context, group string, userID int64) error {
	if err := s.member(group); err != nil {
		return err
	}
	defer s.forget(userID)
	s.forget(userID)
	return s.st.removeMember(ctx, group, userID)
}

// Grant implements Admin.
func (s *service) Grant(ctx context.Context, a Access) error {
	if err := validAccess(a); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pol.Load().groups[a.Group]; !ok {
		return fmt.Errorf("%w: no group %s", ErrNotFound, a.Group)
	}
	if err := s.st.putAccess(ctx, a); err != nil {
		return err
	}
	s.dataAccess = append(slices.DeleteFunc(s.dataAccess, func(x Access) bool { return sameTarget(x, a) }), a)
	return s.rebuildLocked()
}

// Revoke implements Admin.
func (s *service) Revoke(ctx context.Context, a Access) error {
	if err := validAccess(a); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.deleteAccess(ctx, a); err != nil {
		return err
	}
	s.dataAccess = slices.DeleteFunc(s.dataAccess, func(x Access) bool { return sameTarget(x, a) })
	return s.rebuildLocked()
}

func sameTarget(x, a Access) bool {
	return x.Group == a.Group && x.Model == a.Model && x.Collection == a.Collection
}
