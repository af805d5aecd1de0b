package contracts

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrDuplicateDriver is returned by Registry.Register for a name (or an
// alias) another driver of the registry already answers to.
var ErrDuplicateDriver = errors.New("driver registered twice")

// DriverInfo is what a driver says about itself: the name a user types
// (a --model, --executor or --store value, a Tenant's enum value), other
// names it answers to, and one line of help.
type DriverInfo struct {
	// Name is the driver's name; it is required.
	Name string
	// Aliases are further names Lookup accepts (postgresql for postgres).
	// Help and Names list Name only.
	Aliases []string
	// Help says what the driver is in a few words, without its name; help
	// texts show it in parentheses after the name.
	Help string
}

// Describer is a driver descriptor: ModelDriver, ExecutorDriver and
// StoreDriver are.
type Describer interface {
	Describe() DriverInfo
}

// Registry holds the drivers of one kind (models, executors, stores) by
// name, in the style of database/sql's Register and Drivers: a driver
// package exports its descriptor, a composition root (the kernel command)
// registers the descriptors it links, and everything that names drivers
// to a person (flag help, "want a or b" errors, `manager dev`'s choices)
// reads them from here, so adding a driver is one package and one line.
//
// Names are kept in the order they were registered: the composition root
// registers in the order its API enumerates them, which is the order help
// and errors list them. A Registry is safe for concurrent use.
type Registry[D Describer] struct {
	kind string

	mu     sync.RWMutex
	names  []string     // primary names, in registration order
	byName map[string]D // names and aliases
}

// NewRegistry returns an empty registry; kind ("model", "executor",
// "store") names its drivers in errors.
func NewRegistry[D Describer](kind string) *Registry[D] {
	return &Registry[D]{kind: kind, byName: map[string]D{}}
}

// MustRegistry returns a registry of drivers, registered in order, for a
// package-level registry of a list fixed in the source. Like
// regexp.MustCompile it panics when the list is wrong: here, when two
// drivers share a name.
func MustRegistry[D Describer](kind string, drivers ...D) *Registry[D] {
	r := NewRegistry[D](kind)
	for _, d := range drivers {
		if err := r.Register(d); err != nil {
			panic(err)
		}
	}
	return r
}

// Register adds d under its name and aliases. It refuses an empty name and
// a name or alias already taken (ErrDuplicateDriver), adding nothing.
func (r *Registry[D]) Register(d D) error {
	info := d.Describe()
	if info.Name == "" {
		return fmt.Errorf("register %s driver: no name", r.kind)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	all := append([]string{info.Name}, info.Aliases...)
	for i, name := range all {
		if _, taken := r.byName[name]; taken || name == "" || containsBefore(all, i) {
			return fmt.Errorf("register %s driver %q: %w: %q", r.kind, info.Name, ErrDuplicateDriver, name)
		}
	}
	for _, name := range all {
		r.byName[name] = d
	}
	r.names = append(r.names, info.Name)
	return nil
}

// containsBefore reports whether all[i] occurs in all[:i].
func containsBefore(all []string, i int) bool {
	for _, s := range all[:i] {
		if s == all[i] {
			return true
		}
	}
	return false
}

// Lookup returns the driver answering to name. An unknown name is an
// *UnknownDriverError listing the registered names.
func (r *Registry[D]) Lookup(name string) (D, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.byName[name]
	if !ok {
		return d, &UnknownDriverError{Kind: r.kind, Name: name, Known: append([]string(nil), r.names...)}
	}
	return d, nil
}

// Names returns the registered names, aliases left out, in registration
// order.
func (r *Registry[D]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]string(nil), r.names...)
}

// Choices returns the names as a person reads them: "a, b or c".
func (r *Registry[D]) Choices() string { return OrList(r.Names()) }

// Help returns every driver with its help text: "a (what a is) or b (what
// b is)". A driver without help text is listed by name alone.
func (r *Registry[D]) Help() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	items := make([]string, len(r.names))
	for i, name := range r.names {
		items[i] = name
		if help := r.byName[name].Describe().Help; help != "" {
			items[i] += " (" + help + ")"
		}
	}
	return OrList(items)
}

// All returns the registered drivers in registration order.
func (r *Registry[D]) All() []D {
	r.mu.RLock()
	defer r.mu.RUnlock()
	all := make([]D, len(r.names))
	for i, name := range r.names {
		all[i] = r.byName[name]
	}
	return all
}

// UnknownDriverError is Lookup's error for a name no driver answers to.
type UnknownDriverError struct {
	// Kind is the registry's kind: model, executor or store.
	Kind string
	// Name is the name looked up.
	Name string
	// Known are the registered names, in registration order.
	Known []string
}

// Error names the driver asked for and the registered ones.
func (e *UnknownDriverError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("unknown %s driver %q: none is registered", e.Kind, e.Name)
	}
	return fmt.Sprintf("unknown %s driver %q: want %s", e.Kind, e.Name, OrList(e.Known))
}

// OrList joins items as a person lists alternatives: "a", "a or b",
// "a, b or c".
func OrList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
