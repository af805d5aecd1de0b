package meta

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

// service holds the contributed items by contribution id and by name.
type service struct {
	orm      orm.Service
	isSystem func(plugin string) bool

	mu      sync.RWMutex
	views   map[string]entry[View] // by name
	actions map[string]entry[Action]
	menus   map[string]entry[Menu]
	// pending are items a plugin's validation accepted but that are not
	// (yet) live, by plugin then point/name: the judge's load gate checks
	// a plugin's items in order without adding them, so a later item may
	// refer to an earlier one of the same plugin. They expire after
	// pendingTTL, and a dangling reference left by one is harmless: it is
	// read as missing.
	pending map[string]map[string]pend
}

// pend is a pending item.
type pend struct {
	item any
	at   time.Time
}

// pendingTTL is how long a pending item may be referred to.
const pendingTTL = time.Minute

// maxPending bounds the pending items of one plugin.
const maxPending = MaxMenus + MaxActions

// remember records a validated item of plugin as pending.
func (s *service) remember(plugin, point, name string, item any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) > maxPendingPlugins {
		s.sweepLocked()
	}
	p := s.pending[plugin]
	if p == nil || len(p) >= maxPending {
		p = map[string]pend{}
		s.pending[plugin] = p
	}
	p[point+"/"+name] = pend{item: item, at: time.Now()}
}

// maxPendingPlugins is how many plugins may hold pending items before the
// expired ones are swept.
const maxPendingPlugins = 32

// sweepLocked forgets the pending items that expired.
func (s *service) sweepLocked() {
	for plugin, items := range s.pending {
		for key, p := range items {
			if time.Since(p.at) > pendingTTL {
				delete(items, key)
			}
		}
		if len(items) == 0 {
			delete(s.pending, plugin)
		}
	}
}

// pendingLocked is plugin's pending item of point called name, if fresh.
func (s *service) pendingLocked(plugin, point, name string) (any, bool) {
	p, ok := s.pending[plugin][point+"/"+name]
	if !ok || time.Since(p.at) > pendingTTL {
		return nil, false
	}
	return p.item, true
}

// viewLocked is the view called name, live or pending for plugin.
func (s *service) viewLocked(plugin, name string) (View, bool) {
	if e, ok := s.views[name]; ok {
		return e.item, true
	}
	v, ok := s.pendingLocked(plugin, ViewPoint, name)
	view, isView := v.(View)
	return view, ok && isView
}

func (s *service) actionLocked(plugin, name string) bool {
	_, live := s.actions[name]
	_, pending := s.pendingLocked(plugin, ActionPoint, name)
	return live || pending
}

func (s *service) menuLocked(plugin, name string) (Menu, bool) {
	if e, ok := s.menus[name]; ok {
		return e.item, true
	}
	v, ok := s.pendingLocked(plugin, MenuPoint, name)
	m, isMenu := v.(Menu)
	return m, ok && isMenu
}

// entry is an item with the contribution that holds it. A plugin's new
// version may take over its own names; the old version's removal then
// leaves the new items alone.
type entry[T any] struct {
	item   T
	id     string
	plugin string
}

func newService(o orm.Service) *service {
	return &service{orm: o, isSystem: func(string) bool { return false }, views: map[string]entry[View]{}, actions: map[string]entry[Action]{}, menus: map[string]entry[Menu]{},
		pending: map[string]map[string]pend{}}
}

// takenBy reports whether name is held by a plugin other than plugin.
func takenBy[T any](m map[string]entry[T], name, plugin string) bool {
	e, ok := m[name]
	return ok && e.plugin != plugin
}

// drop removes the item contribution id holds.
func drop[T any](mu *sync.RWMutex, m map[string]entry[T], id string) {
	mu.Lock()
	defer mu.Unlock()
	for name, e := range m {
		if e.id == id {
			delete(m, name)
			return
		}
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// checkName refuses an empty, long or odd name, and one already taken.
func checkName(what, name string, taken bool) error {
	switch {
	case name == "":
		return invalid("a %s needs a name", what)
	case len(name) > MaxNameLen:
		return invalid("%s name %.40q... is longer than %d bytes", what, name, MaxNameLen)
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0:
		return invalid("%s name %q has a space or a control character", what, name)
	case taken:
		return invalid("%s %q exists", what, name)
	}
	return nil
}

// fieldsOf is the names of model's fields, or an error naming the model.
func (s *service) fieldsOf(model string) (map[string]bool, error) {
	spec, err := s.orm.Spec(model)
	if err != nil {
		return nil, invalid("unknown model %q", model)
	}
	out := make(map[string]bool, len(spec.Fields))
	for _, f := range spec.Fields {
		out[f.Name] = true
	}
	return out, nil
}

func (s *service) checkView(plugin string, item any) error {
	v, err := kernel.ItemAs[View](item, "a view is {name, model, type, inherit?, priority?, fields?, after?, remove?}")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	taken := takenBy(s.views, v.Name, plugin)
	if err := checkName("view", v.Name, taken); err != nil {
		return err
	}
	if err := s.quotaLocked(plugin, ViewPoint, v.Name); err != nil {
		return err
	}
	if v.Priority < 0 || v.Priority > MaxPriority {
		return invalid("view %s: priority %d must be from 0 to %d", v.Name, v.Priority, MaxPriority)
	}
	if !slices.Contains(ViewTypes, v.Type) {
		return invalid("view %s: type %q is not one of %v", v.Name, v.Type, ViewTypes)
	}
	fields, err := s.fieldsOf(v.Model)
	if err != nil {
		return fmt.Errorf("view %s: %w", v.Name, err)
	}
	if v.Inherit != "" {
		parent, ok := s.viewLocked(plugin, v.Inherit)
		if !ok {
			return invalid("view %s: unknown parent view %q", v.Name, v.Inherit)
		}
		if parent.Model != v.Model || parent.Type != v.Type {
			return invalid("view %s: extends %s, a %s view of %s; it must be of the same model and type", v.Name, parent.Name, parent.Type, parent.Model)
		}
		if d := s.depthLocked(plugin, v.Inherit) + 1; d > MaxInheritDepth {
			return invalid("view %s: inheritance depth %d passes the limit of %d", v.Name, d, MaxInheritDepth)
		}
	}
	n := 0
	for _, w := range s.views {
		if w.item.Model == v.Model && w.item.Name != v.Name {
			n++
		}
	}
	if n >= MaxViewsPerModel {
		return invalid("view %s: model %s has %d views; the limit is %d views per model", v.Name, v.Model, n, MaxViewsPerModel)
	}
	if len(v.Fields) > MaxViewFields || len(v.Remove) > MaxViewFields {
		return invalid("view %s: more than %d fields", v.Name, MaxViewFields)
	}
	for _, f := range v.Fields {
		if !fields[f.Name] {
			return invalid("view %s: model %s has no field %q", v.Name, v.Model, f.Name)
		}
		if len(f.Label) > MaxLabelLen || len(f.Widget) > MaxNameLen {
			return invalid("view %s: field %s: a label is at most %d bytes and a widget %d", v.Name, f.Name, MaxLabelLen, MaxNameLen)
		}
	}
	for _, name := range append(slices.Clone(v.Remove), v.After) {
		if name != "" && !fields[name] {
			return invalid("view %s: model %s has no field %q", v.Name, v.Model, name)
		}
	}
	return nil
}

// quotaLocked refuses an agent plugin's item past MaxPerPlugin: the items
// it holds under other names than this one's.
func (s *service) quotaLocked(plugin, point, name string) error {
	if s.isSystem(plugin) {
		return nil
	}
	n := countOf(s.views, plugin, point == ViewPoint, name) + countOf(s.actions, plugin, point == ActionPoint, name) +
		countOf(s.menus, plugin, point == MenuPoint, name)
	if n >= MaxPerPlugin {
		return invalid("%s %s: plugin %s has %d views, actions and menus; the limit is %d per agent plugin", point, name, plugin, n, MaxPerPlugin)
	}
	return nil
}

func countOf[T any](m map[string]entry[T], plugin string, samePoint bool, name string) int {
	n := 0
	for key, e := range m {
		if e.plugin == plugin && (!samePoint || key != name) {
			n++
		}
	}
	return n
}

// depthLocked is how many views a view's chain of parents holds, itself
// included.
func (s *service) depthLocked(plugin, name string) int {
	d := 0
	for name != "" && d <= MaxInheritDepth {
		d++
		v, _ := s.viewLocked(plugin, name)
		name = v.Inherit
	}
	return d
}

func (s *service) addView(x kernel.Contribution) error {
	id, item := x.ID, x.Item
	v, err := kernel.ItemAs[View](item, "a view")
	if err != nil {
		return err
	}
	if v.Priority == 0 {
		v.Priority = DefaultPriority
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.views[v.Name] = entry[View]{item: v, id: id, plugin: x.Fiber}
	return nil
}

func (s *service) dropView(id string) { drop(&s.mu, s.views, id) }

func (s *service) checkAction(plugin string, item any) error {
	a, err := kernel.ItemAs[Action](item, "an action is {name, label?, model, viewType?, domain?, order?}")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.mu.RLock()
	taken := takenBy(s.actions, a.Name, plugin)
	n := len(s.actions)
	quota := s.quotaLocked(plugin, ActionPoint, a.Name)
	s.mu.RUnlock()
	if quota != nil {
		return quota
	}
	if err := checkName("action", a.Name, taken); err != nil {
		return err
	}
	if n >= MaxActions {
		return invalid("action %s: there are %d actions; the limit is %d", a.Name, n, MaxActions)
	}
	if len(a.Label) > MaxLabelLen {
		return invalid("action %s: the label is longer than %d bytes", a.Name, MaxLabelLen)
	}
	if a.ViewType != "" && !slices.Contains(ViewTypes, a.ViewType) {
		return invalid("action %s: view type %q is not one of %v", a.Name, a.ViewType, ViewTypes)
	}
	if _, err := s.fieldsOf(a.Model); err != nil {
		return fmt.Errorf("action %s: %w", a.Name, err)
	}
	return s.checkDomain(a)
}

func (s *service) addAction(x kernel.Contribution) error {
	id, item := x.ID, x.Item
	a, err := kernel.ItemAs[Action](item, "an action")
	if err != nil {
		return err
	}
	if a.ViewType == "" {
		a.ViewType = "list"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions[a.Name] = entry[Action]{item: a, id: id, plugin: x.Fiber}
	return nil
}

func (s *service) dropAction(id string) { drop(&s.mu, s.actions, id) }

func (s *service) checkMenu(plugin string, item any) error {
	m, err := kernel.ItemAs[Menu](item, "a menu is {name, label?, parent?, action?, sequence?}")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	taken := takenBy(s.menus, m.Name, plugin)
	if err := checkName("menu", m.Name, taken); err != nil {
		return err
	}
	if err := s.quotaLocked(plugin, MenuPoint, m.Name); err != nil {
		return err
	}
	if len(s.menus) >= MaxMenus {
		return invalid("menu %s: there are %d menus; the limit is %d", m.Name, len(s.menus), MaxMenus)
	}
	if len(m.Label) > MaxLabelLen {
		return invalid("menu %s: the label is longer than %d bytes", m.Name, MaxLabelLen)
	}
	if m.Action != "" && !s.actionLocked(plugin, m.Action) {
		return invalid("menu %s: unknown action %q", m.Name, m.Action)
	}
	if m.Parent == "" {
		return nil
	}
	if _, ok := s.menuLocked(plugin, m.Parent); !ok {
		return invalid("menu %s: unknown parent menu %q", m.Name, m.Parent)
	}
	d := 1
	for p := m.Parent; p != "" && d <= MaxMenuDepth; {
		d++
		pm, _ := s.menuLocked(plugin, p)
		p = pm.Parent
	}
	if d > MaxMenuDepth {
		return invalid("menu %s: depth %d passes the limit of %d", m.Name, d, MaxMenuDepth)
	}
	return nil
}

func (s *service) addMenu(x kernel.Contribution) error {
	id, item := x.ID, x.Item
	m, err := kernel.ItemAs[Menu](item, "a menu")
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.menus[m.Name] = entry[Menu]{item: m, id: id, plugin: x.Fiber}
	return nil
}

func (s *service) dropMenu(id string) { drop(&s.mu, s.menus, id) }
