package orm

import (
	"slices"
	"sync"
)

// owned is a contribution with who made it.
type owned[T any] struct {
	id     string // the contribution's id
	plugin string
	system bool // the plugin is a system plugin: its Go handlers may get the Service
	item   T
}

// registry holds the live contributions of the five points and the schema
// resolved from them, rebuilt after every change.
type registry struct {
	mu sync.RWMutex
	contribs
	cur *schema
}

// contribs are the live contributions of the five points, in order.
type contribs struct {
	models    []owned[Model]
	fields    []owned[FieldContribution]
	methods   []owned[Method]
	hooks     []owned[Hook]
	onchanges []owned[Onchange]
}

// add appends a contribution to one of r's lists and marks the schema
// stale.
func add[T any](r *registry, list *[]owned[T], o owned[T]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*list, r.cur = append(*list, o), nil
}

// remove withdraws the contribution with id, whatever its point.
func (r *registry) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.models = slices.DeleteFunc(r.models, func(o owned[Model]) bool { return o.id == id })
	r.fields = slices.DeleteFunc(r.fields, func(o owned[FieldContribution]) bool { return o.id == id })
	r.methods = slices.DeleteFunc(r.methods, func(o owned[Method]) bool { return o.id == id })
	r.hooks = slices.DeleteFunc(r.hooks, func(o owned[Hook]) bool { return o.id == id })
	r.onchanges = slices.DeleteFunc(r.onchanges, func(o owned[Onchange]) bool { return o.id == id })
	r.cur = nil
}

// schema returns the resolved schema, building it when stale.
func (r *registry) schema() *schema {
	r.mu.RLock()
	s := r.cur
	r.mu.RUnlock()
	if s != nil {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		r.cur = build(r.contribs)
	}
	return r.cur
}

// checkModel reports a clash of m with a live model another plugin
// declared. Fields other plugins added do not clash: the model's own
// declaration wins, so an added field cannot lock its owner out.
func (r *registry) checkModel(plugin string, m Model) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, o := range r.models {
		if o.item.Name == m.Name && o.plugin != plugin {
			return errorf(ErrInvalid, at{m.Name, ""}, "the model is already declared by plugin %s", o.plugin)
		}
	}
	return nil // a field another plugin added under a name the model declares gives way to it
}

// checkField reports a clash of fc with a live field another plugin declared.
func (r *registry) checkField(plugin string, fc FieldContribution) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, o := range r.models {
		if _, ok := o.item.Fields[fc.Name]; ok && o.item.Name == fc.Model && o.plugin != plugin {
			return errorf(ErrInvalid, at{fc.Model, fc.Name}, "the model's declaration by plugin %s already has the field", o.plugin)
		}
	}
	for _, o := range r.fields {
		if o.item.Model == fc.Model && o.item.Name == fc.Name && o.plugin != plugin {
			return errorf(ErrInvalid, at{fc.Model, fc.Name}, "the field is already added by plugin %s", o.plugin)
		}
	}
	return nil
}

// checkForeignField limits an agent plugin's field on a model another
// plugin declares: it may not be required (that plugin's creates would
// fail) and a many2one in it may only be set null when its target goes
// (restrict would block deletions, cascade would delete that plugin's
// records).
func (r *registry) checkForeignField(plugin string, fc FieldContribution) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, o := range r.models {
		if o.item.Name != fc.Model || o.plugin == plugin {
			continue
		}
		f := fc.Field
		if f.Required {
			return errorf(ErrInvalid, at{fc.Model, fc.Name}, "a field an agent plugin adds to plugin %s's model cannot be required", o.plugin)
		}
		if f.Kind == KindMany2One && f.OnDelete != "" && f.OnDelete != OnDeleteSetNull {
			return errorf(ErrInvalid, at{fc.Model, fc.Name}, "a many2one an agent plugin adds to plugin %s's model can only be set null when its target goes", o.plugin)
		}
	}
	return nil
}

// checkMethod reports a method of the same model and name that another
// plugin already contributes: one owner per method, so a computed field
// cannot be answered by whoever contributes first.
func (r *registry) checkMethod(plugin string, m Method) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, o := range r.methods {
		if o.item.Model == m.Model && o.item.Name == m.Name && o.plugin != plugin {
			return errorf(ErrInvalid, at{m.Model, ""}, "method %s is already contributed by plugin %s", m.Name, o.plugin)
		}
	}
	return nil
}
