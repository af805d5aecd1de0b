package rbac

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sms-baseline/sms/plugins/orm"
)

// policy is one immutable view of every group, access and rule, from the
// plugins' contributions, the data and the built-ins. It is rebuilt
// whole on every change and swapped in atomically.
type policy struct {
	groups map[string]groupDef
	access map[string][]Access // by group
	rules  map[string][]Rule   // by model
}

type groupDef struct {
	Group
	code bool
}

// builtins are the groups and access every policy starts from.
var builtins = struct {
	groups []Group
	access []Access
}{
	groups: []Group{
		{Name: GroupUser, Description: "every signed-in user"},
		{Name: GroupAdmin, Implies: []string{GroupUser}, Description: "admin users and admin credentials"},
	},
	access: []Access{
		{Group: GroupAdmin, Model: All, Read: true, Create: true, Write: true, Unlink: true},
		{Group: GroupAdmin, Collection: All, Read: true, Create: true, Write: true, Unlink: true},
	},
}

// sources is what a policy is built from.
type sources struct {
	codeGroups []Group
	codeAccess []Access
	rules      []Rule
	dataGroups []Group
	dataAccess []Access
}

func buildPolicy(src sources) (*policy, error) {
	p := &policy{groups: map[string]groupDef{}, access: map[string][]Access{}, rules: map[string][]Rule{}}
	for _, g := range append(slices.Clone(builtins.groups), src.codeGroups...) {
		p.groups[g.Name] = groupDef{Group: g, code: true}
	}
	for _, g := range src.dataGroups {
		if _, ok := p.groups[g.Name]; !ok {
			p.groups[g.Name] = groupDef{Group: g}
		}
	}
	if err := p.acyclic(); err != nil {
		return nil, err
	}
	for _, a := range slices.Concat(builtins.access, src.codeAccess, src.dataAccess) {
		p.access[a.Group] = append(p.access[a.Group], a)
	}
	for _, r := range src.rules {
		p.rules[r.Model] = append(p.rules[r.Model], r)
	}
	return p, nil
}

// acyclic refuses a group that implies itself, directly or not.
func (p *policy) acyclic() error {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		switch state[name] {
		case visiting:
			return fmt.Errorf("%w: group %s implies itself (%v)", ErrInvalid, name, append(path, name))
		case done:
			return nil
		}
		state[name] = visiting
		for _, next := range p.groups[name].Implies {
			if err := visit(next, append(path, name)); err != nil {
				return err
			}
		}
		state[name] = done
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(p.groups)) {
		if err := visit(name, nil); err != nil {
			return err
		}
	}
	return nil
}

// closure is every group the given ones are in, implied ones included.
func (p *policy) closure(direct []string) map[string]bool {
	out := map[string]bool{}
	var add func(string)
	add = func(g string) {
		if out[g] {
			return
		}
		out[g] = true
		for _, next := range p.groups[g].Implies {
			add(next)
		}
	}
	for _, g := range direct {
		add(g)
	}
	return out
}

// allows reports whether a grants op.
func (a Access) allows(op orm.Action) bool {
	switch op {
	case orm.ActionRead:
		return a.Read
	case orm.ActionCreate:
		return a.Create
	case orm.ActionWrite:
		return a.Write
	case orm.ActionUnlink:
		return a.Unlink
	}
	return false
}

// can reports whether the groups may do op on a model (collection false)
// or a collection (true) named name.
func (p *policy) can(groups map[string]bool, collection bool, name string, op orm.Action) bool {
	for g := range groups {
		for _, a := range p.access[g] {
			target := a.Model
			if collection {
				target = a.Collection
			}
			if (target == name || target == All) && a.allows(op) {
				return true
			}
		}
	}
	return false
}

// domain is what op on model is narrowed to for the groups and uid: the
// global rules ANDed, and the group rules that apply ORed.
func (p *policy) domain(groups map[string]bool, uid int64, model string, op orm.Action) orm.Domain {
	var global orm.Domain
	var anyOf []orm.Domain
	open := false // a group rule with an empty domain: the group part is everything
	for _, r := range p.rules[model] {
		if len(r.Ops) > 0 && !slices.Contains(r.Ops, op) {
			continue
		}
		d := withUID(r.Domain, uid)
		switch {
		case len(r.Groups) == 0:
			global = append(global, d...)
		case slices.ContainsFunc(r.Groups, func(g string) bool { return groups[g] }):
			if len(d) == 0 {
				open = true
			}
			anyOf = append(anyOf, d)
		}
	}
	if open || len(anyOf) == 0 {
		return global
	}
	return append(global, or(anyOf)...)
}

// or joins domains with "|", each made one expression first.
func or(ds []orm.Domain) orm.Domain {
	var out orm.Domain
	for i := 0; i < len(ds)-1; i++ {
		out = append(out, "|")
	}
	for _, d := range ds {
		out = append(out, one(d)...)
	}
	return out
}

// one makes a domain of n expressions a single one, with n-1 "&".
func one(d orm.Domain) orm.Domain {
	n := expressions(d)
	out := make(orm.Domain, 0, len(d)+n)
	for i := 0; i < n-1; i++ {
		out = append(out, "&")
	}
	return append(out, d...)
}

// expressions counts a domain's top-level expressions: each term needs
// none, "!" one and "&" and "|" two.
func expressions(d orm.Domain) int {
	need := 0 // operands still owed to operators seen
	n := 0
	for _, x := range d {
		switch x {
		case "&", "|":
			if need == 0 {
				n++
				need = 2
			} else {
				need++
			}
		case "!":
			if need == 0 {
				n++
				need = 1
			}
		default:
			if need == 0 {
				n++
			} else {
				need--
			}
		}
	}
	return n
}

// withUID returns d with every UID value replaced by uid.
func withUID(d orm.Domain, uid int64) orm.Domain {
	out := make(orm.Domain, len(d))
	for i, x := range d {
		out[i] = replaceUID(x, uid)
	}
	return out
}

func replaceUID(x any, uid int64) any {
	switch v := x.(type) {
	case string:
		if v == UID {
			return uid
		}
	case []any:
		out := make([]any, len(v))
		for i, y := range v {
			out[i] = replaceUID(y, uid)
		}
		return out
	}
	return x
}
