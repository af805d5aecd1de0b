package meta

import (
	"context"
	"errors"

	"github.com/sms-baseline/sms/plugins/orm"
)

// PluginID is the id of the meta system plugin.
const PluginID = "sms.meta"

// Key is the key whose value is the Service (and a kernel.Invoker for
// agent code and the RPC plugin: view, views, action, actions, menus).
const Key = "meta"

// Points owned by the plugin, open to agent plugins.
const (
	ViewPoint   = "view"
	ActionPoint = "action"
	MenuPoint   = "menu"
)

// Bounds on what the points accept.
const (
	MaxViewsPerModel = 64
	MaxInheritDepth  = 8
	MaxViewFields    = 200
	MaxMenus         = 1000
	MaxMenuDepth     = 8
	MaxActions       = 1000
	MaxNameLen       = 80
	MaxLabelLen      = 200
	// MaxPriority is the largest view priority.
	MaxPriority = 1000
	// MaxPerPlugin is how many views, actions and menus together one
	// agent plugin may contribute, so that one cannot use up the kernel's.
	MaxPerPlugin = 64
)

// DefaultPriority is a view's priority when it gives none; among the
// primary views of one model and type a system plugin's wins over an agent
// plugin's, then the lowest priority, and extensions apply from the lowest
// up.
const DefaultPriority = 16

// ViewTypes are the kinds of view there are.
var ViewTypes = []string{"list", "form", "search", "kanban"}

// ViewField is one field of a view.
type ViewField struct {
	Name      string `json:"name"`
	Label     string `json:"label,omitempty"`
	Widget    string `json:"widget,omitempty"`
	ReadOnly  bool   `json:"readonly,omitempty"`
	Invisible bool   `json:"invisible,omitempty"`
	Required  bool   `json:"required,omitempty"`
}

// View is an item of ViewPoint. A primary view (no Inherit) lists its
// fields in order. An extension (Inherit names the view it extends, a
// primary view or another extension) changes the fields it names that the
// view has, inserts the others after After (at the end when After is
// empty) and drops the fields in Remove.
type View struct {
	Name     string      `json:"name"`
	Model    string      `json:"model"`
	Type     string      `json:"type"`
	Inherit  string      `json:"inherit,omitempty"`
	Priority int         `json:"priority,omitempty"`
	Fields   []ViewField `json:"fields,omitempty"`
	After    string      `json:"after,omitempty"`
	Remove   []string    `json:"remove,omitempty"`
}

// CompiledView is a primary view with its extensions applied. Applied
// names them in the order they were applied; Dropped names the fields the
// model no longer has (its plugin was disabled), which the view leaves out.
type CompiledView struct {
	Name    string      `json:"name"`
	Model   string      `json:"model"`
	Type    string      `json:"type"`
	Fields  []ViewField `json:"fields"`
	Applied []string    `json:"applied,omitempty"`
	Dropped []string    `json:"dropped,omitempty"`
}

// Action is an item of ActionPoint: open Model with a view of ViewType
// (default list), narrowed to Domain.
type Action struct {
	Name     string     `json:"name"`
	Label    string     `json:"label,omitempty"`
	Model    string     `json:"model"`
	ViewType string     `json:"viewType,omitempty"`
	Domain   orm.Domain `json:"domain,omitempty"`
	Order    string     `json:"order,omitempty"`
}

// Menu is an item of MenuPoint: an entry under Parent (a root entry when
// empty) that opens Action (a folder when empty), ordered by Sequence then
// name.
type Menu struct {
	Name     string `json:"name"`
	Label    string `json:"label,omitempty"`
	Parent   string `json:"parent,omitempty"`
	Action   string `json:"action,omitempty"`
	Sequence int    `json:"sequence,omitempty"`
}

// MenuNode is a menu entry in the tree Menus answers.
type MenuNode struct {
	Name     string     `json:"name"`
	Label    string     `json:"label"`
	Action   string     `json:"action,omitempty"`
	Model    string     `json:"model,omitempty"`
	Children []MenuNode `json:"children,omitempty"`
}

// Service is the value of Key. Calls act for the caller ctx serves (as
// the ORM does): menus and actions of models the caller may not read are
// left out.
type Service interface {
	// View compiles the primary view of model and type (ErrNotFound when
	// none was contributed).
	View(ctx context.Context, model, viewType string) (CompiledView, error)
	// Views compiles every primary view of model.
	Views(ctx context.Context, model string) ([]CompiledView, error)
	// Action returns an action by name.
	Action(ctx context.Context, name string) (Action, error)
	// Actions lists the actions, by name.
	Actions(ctx context.Context) ([]Action, error)
	// Menus answers the menu tree.
	Menus(ctx context.Context) ([]MenuNode, error)
}

// Errors the Service and the validators wrap.
var (
	// ErrInvalid: an item names an unknown model, field, view, action or
	// parent menu, or passes a bound.
	ErrInvalid = errors.New("invalid")
	// ErrNotFound: no such view or action.
	ErrNotFound = errors.New("not found")
)
