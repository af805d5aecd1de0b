package kernel

import (
	"slices"
	"strings"
)

// StateView is a snapshot of the whole kernel for admin views.
type StateView struct {
	Name   string      `json:"name"`
	Fibers []FiberView `json:"fibers"`
	Taint  TaintSet    `json:"taint"`
	// SafeMode: the kernel booted with system plugins only (Options.SafeMode).
	SafeMode bool `json:"safeMode,omitempty"`
}

// Generation counts the changes to the kernel: it moves whenever what a
// view of the kernel shows (fibers, keys, points, contributions, taint)
// may have changed, and after the observers of a contribution or a
// withdrawal have reacted, so state plugins derive from contributions
// (routes, collections) moves it too. Equal generations mean nothing
// changed in between; a cache keyed by it is rebuilt only on change.
func (k *Kernel) Generation() uint64 { return k.reg.gen.Load() }

// State returns a snapshot of the kernel's fibers and taint flags.
func (k *Kernel) State() StateView {
	return StateView{Name: k.name, Fibers: k.Fibers(), Taint: k.Tainted(), SafeMode: k.safeMode}
}

// KeyView describes one key in the catalog.
type KeyView struct {
	Name     string  `json:"name"`
	Meta     KeyMeta `json:"meta"`
	Defined  bool    `json:"defined"`
	Definer  string  `json:"definer,omitempty"`
	Provider string  `json:"provider,omitempty"`
}

// PointView describes one point in the catalog.
type PointView struct {
	Name          string    `json:"name"`
	Meta          PointMeta `json:"meta"`
	Definer       string    `json:"definer,omitempty"`
	Contributions []string  `json:"contributions"` // contributing fiber per contribution, in order
}

// Catalog lists keys and points, sorted by name, with who provides and
// contributes what.
type Catalog struct {
	Keys   []KeyView   `json:"keys"`
	Points []PointView `json:"points"`
}

// Catalog returns a snapshot of the key and point registries.
func (k *Kernel) Catalog() Catalog {
	k.reg.RLock()
	defer k.reg.RUnlock()
	c := Catalog{Keys: []KeyView{}, Points: []PointView{}}
	for name, e := range k.keys {
		if !e.defined && !e.present {
			continue
		}
		c.Keys = append(c.Keys, KeyView{Name: name, Meta: e.meta, Defined: e.defined, Definer: e.definer, Provider: e.owner})
	}
	for name, p := range k.points {
		v := PointView{Name: name, Meta: p.meta, Definer: p.definer, Contributions: []string{}}
		for _, x := range p.contribs {
			v.Contributions = append(v.Contributions, x.Fiber)
		}
		c.Points = append(c.Points, v)
	}
	slices.SortFunc(c.Keys, func(a, b KeyView) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(c.Points, func(a, b PointView) int { return strings.Compare(a.Name, b.Name) })
	return c
}
