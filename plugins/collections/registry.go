package collections

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// owned is a contributed item with the contribution that brought it.
type owned[T any] struct {
	id     string // the contribution's id
	plugin string
	item   T
}

// registry holds the live contributions of the three points. The kernel's
// observers change it; requests read it concurrently.
type registry struct {
	mu     sync.RWMutex
	colls  []owned[Collection]
	fields []owned[FieldContribution]
	hooks  []owned[Hook]
}

// definition returns a collection with the fields contributed to it.
func (r *registry) definition(name string) (Collection, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.definitionLocked(name)
}

func (r *registry) definitionLocked(name string) (Collection, bool) {
	i := slices.IndexFunc(r.colls, func(o owned[Collection]) bool { return o.item.Name == name })
	if i < 0 {
		return Collection{}, false
	}
	return r.withFields(r.colls[i].item), true
}

// withFields returns c plus the live field contributions for it, in
// contribution order; the caller holds r.mu.
func (r *registry) withFields(c Collection) Collection {
	out := Collection{Name: c.Name, Fields: slices.Clone(c.Fields), Public: c.Public}
	for _, f := range r.fields {
		if f.item.Collection == c.Name {
			out.Fields = append(out.Fields, f.item.Field)
		}
	}
	return out
}

// definitions returns every collection, by name.
func (r *registry) definitions() []Collection {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Collection, 0, len(r.colls))
	for _, c := range r.colls {
		out = append(out, r.withFields(c.item))
	}
	slices.SortFunc(out, func(a, b Collection) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// checkCollection reports why c cannot join the live definitions: its
// name is taken, or one of its fields is already contributed to it.
func (r *registry) checkCollection(c Collection) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.checkCollectionLocked(c)
}

func (r *registry) checkCollectionLocked(c Collection) error {
	for _, o := range r.colls {
		if o.item.Name == c.Name {
			return fmt.Errorf("collection %q is already defined by plugin %s", c.Name, o.plugin)
		}
	}
	for _, f := range c.Fields {
		if o := r.fieldOwner(c.Name, f.Name); o != nil {
			return fmt.Errorf("collection %q: field %q is already contributed by plugin %s", c.Name, f.Name, o.plugin)
		}
	}
	return nil
}

// checkField reports why fc cannot join the live definitions: the
// collection already has a field of that name.
func (r *registry) checkField(fc FieldContribution) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.checkFieldLocked(fc)
}

func (r *registry) checkFieldLocked(fc FieldContribution) error {
	name, field := fc.Collection, fc.Field.Name
	for _, o := range r.colls {
		if o.item.Name == name && slices.ContainsFunc(o.item.Fields, func(f Field) bool { return f.Name == field }) {
			return fmt.Errorf("collection %q: field %q is already defined by plugin %s", name, field, o.plugin)
		}
	}
	if o := r.fieldOwner(name, field); o != nil {
		return fmt.Errorf("collection %q: field %q is already contributed by plugin %s", name, field, o.plugin)
	}
	return nil
}

func (r *registry) fieldOwner(collection, field string) *owned[FieldContribution] {
	for i, o := range r.fields {
		if o.item.Collection == collection && o.item.Field.Name == field {
			return &r.fields[i]
		}
	}
	return nil
}

// prospective returns what c's definition would be once contributed.
func (r *registry) prospective(c Collection) Collection {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.withFields(c)
}

// prospectiveField returns what the definition of fc's collection would be
// with fc, or false while that collection is not defined.
func (r *registry) prospectiveField(fc FieldContribution) (Collection, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.definitionLocked(fc.Collection)
	if ok {
		c.Fields = append(c.Fields, fc.Field)
	}
	return c, ok
}

// addCollection registers a collection unless it conflicts with a live one
// (possible only for contributions made while this plugin was inactive).
func (r *registry) addCollection(o owned[Collection]) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkCollectionLocked(o.item); err != nil {
		return err
	}
	r.colls = append(r.colls, o)
	return nil
}

func (r *registry) addField(o owned[FieldContribution]) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkFieldLocked(o.item); err != nil {
		return err
	}
	r.fields = append(r.fields, o)
	return nil
}

func (r *registry) addHook(o owned[Hook]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hooks = append(r.hooks, o)
}

// remove drops the contribution with the given id from every list; an id
// that was never registered is ignored.
func (r *registry) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.colls = slices.DeleteFunc(r.colls, func(o owned[Collection]) bool { return o.id == id })
	r.fields = slices.DeleteFunc(r.fields, func(o owned[FieldContribution]) bool { return o.id == id })
	r.hooks = slices.DeleteFunc(r.hooks, func(o owned[Hook]) bool { return o.id == id })
}

// hooksFor returns the hooks of a collection for one operation and timing,
// in contribution order.
func (r *registry) hooksFor(collection string, on Op, when When) []owned[Hook] {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []owned[Hook]
	for _, h := range r.hooks {
		if h.item.Collection == collection && h.item.On == on && h.item.When == when {
			out = append(out, h)
		}
	}
	return out
}

// hasHooks reports whether any hook watches on for the collection.
func (r *registry) hasHooks(collection string, on Op) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.ContainsFunc(r.hooks, func(h owned[Hook]) bool { return h.item.Collection == collection && h.item.On == on })
}
