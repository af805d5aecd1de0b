package orm

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// schema is the resolved, immutable view of the contributions.
type schema struct {
	models    map[string]*model
	methods   map[string]map[string]owned[Method] // model -> method name
	hooks     map[string][]owned[Hook]            // model
	onchanges map[string][]owned[Onchange]        // model
}

// model is a resolved model.
type model struct {
	name, plugin, description string
	display                   string // the display field, or ""
	order                     []orderTerm
	fields                    map[string]*field
	inbound                   []*field // many2one fields (of any model) targeting this one
}

// field is a resolved field. broken, when set, says why it cannot be used
// (a target model that is not declared, say); it is then left out of reads.
type field struct {
	name string
	Field
	plugin string
	system bool // declared by a system plugin
	owner  *model
	target *model   // relational kinds
	invert *field   // one2many: the target's many2one
	path   []*field // related: the many2one hops, then the final field
	broken string
}

func (f *field) stored() bool { return stored(f.Kind) && f.broken == "" }

// names returns the model's declared field names, sorted.
func (m *model) names() []string { return slices.Sorted(maps.Keys(m.fields)) }

func build(c contribs) *schema {
	models, fields, methods, hooks, onchanges := c.models, c.fields, c.methods, c.hooks, c.onchanges
	s := &schema{models: map[string]*model{}, methods: map[string]map[string]owned[Method]{},
		hooks: map[string][]owned[Hook]{}, onchanges: map[string][]owned[Onchange]{}}
	for _, o := range models {
		if _, dup := s.models[o.item.Name]; dup {
			continue
		}
		m := &model{name: o.item.Name, plugin: o.plugin, description: o.item.Description, fields: map[string]*field{}}
		for name, f := range o.item.Fields {
			m.fields[name] = &field{name: name, Field: f, plugin: o.plugin, system: o.system, owner: m}
		}
		m.display = o.item.DisplayField
		m.order, _ = parseOrder(o.item.Order)
		s.models[m.name] = m
	}
	for _, o := range fields {
		m, ok := s.models[o.item.Model]
		if ok && m.fields[o.item.Name] == nil {
			f := o.item.Field
			if !o.system && o.plugin != m.plugin {
				// Whatever order contributions came in: an agent plugin's
				// field on another plugin's model is never required and only
				// ever set null when its target goes.
				f.Required = false
				if f.Kind == KindMany2One {
					f.OnDelete = OnDeleteSetNull
				}
			}
			m.fields[o.item.Name] = &field{name: o.item.Name, Field: f, plugin: o.plugin, system: o.system, owner: m}
		}
	}
	for _, m := range s.models {
		s.resolveRelations(m)
	}
	for _, m := range s.models {
		s.resolve(m)
	}
	for _, o := range methods {
		if s.methods[o.item.Model] == nil {
			s.methods[o.item.Model] = map[string]owned[Method]{}
		}
		if _, dup := s.methods[o.item.Model][o.item.Name]; !dup {
			s.methods[o.item.Model][o.item.Name] = o
		}
	}
	for _, o := range hooks {
		s.hooks[o.item.Model] = append(s.hooks[o.item.Model], o)
	}
	for _, o := range onchanges {
		s.onchanges[o.item.Model] = append(s.onchanges[o.item.Model], o)
	}
	return s
}

// resolveRelations links m's relational fields to the models they name;
// it runs for every model before resolve, so paths see every relation
// resolved.
func (s *schema) resolveRelations(m *model) {
	for _, f := range m.fields {
		if f.Kind == KindMany2One || f.Kind == KindOne2Many || f.Kind == KindMany2Many {
			if f.target = s.models[f.Target]; f.target == nil {
				f.broken = fmt.Sprintf("target model %s is not declared", f.Target)
				continue
			}
		}
		switch f.Kind {
		case KindMany2One:
			f.target.inbound = append(f.target.inbound, f)
		case KindOne2Many:
			inv := f.target.fields[f.Inverse]
			if inv == nil || inv.Kind != KindMany2One || inv.Target != m.name {
				f.broken = fmt.Sprintf("inverse %s.%s is not a many2one to %s", f.Target, f.Inverse, m.name)
			}
			f.invert = inv
		}
	}
}

// resolve settles m's related fields, display field and order.
func (s *schema) resolve(m *model) {
	for _, f := range m.fields {
		if f.Kind == KindRelated {
			s.resolvePath(m, f)
		}
	}
	if d := m.fields[m.display]; m.display != "" && (d == nil || !d.stored()) {
		m.display = ""
	}
	if m.display == "" {
		if n := m.fields["name"]; n != nil && n.stored() {
			m.display = "name"
		}
	}
	m.order = slices.DeleteFunc(m.order, func(t orderTerm) bool {
		f := m.fields[t.field]
		return !isSystemField(t.field) && (f == nil || !f.stored())
	})
}

func (s *schema) resolvePath(m *model, f *field) {
	cur := m
	parts := strings.Split(f.Path, ".")
	for i, p := range parts {
		hop := cur.fields[p]
		if hop == nil || (i < len(parts)-1 && (hop.Kind != KindMany2One || hop.broken != "")) {
			f.broken = fmt.Sprintf("path %s: %s.%s is not a many2one", f.Path, cur.name, p)
			if i == len(parts)-1 {
				f.broken = fmt.Sprintf("path %s: %s has no field %s", f.Path, cur.name, p)
			}
			return
		}
		f.path = append(f.path, hop)
		if i < len(parts)-1 {
			if hop.target == nil {
				hop.target = s.models[hop.Target]
			}
			if hop.target == nil {
				f.broken = fmt.Sprintf("path %s: target model %s is not declared", f.Path, hop.Target)
				return
			}
			cur = hop.target
		}
	}
	if last := f.path[len(f.path)-1]; !stored(last.Kind) || last.broken != "" {
		f.broken = fmt.Sprintf("path %s must end at a stored field", f.Path)
	}
}
