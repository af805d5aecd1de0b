package collections

import (
	"context"
	"errors"

	"github.com/sms-baseline/sms/kernel"
)

// Key is the key whose value is the Service. Only system fibers provide it;
// agent fibers may inject it and call it through cap.invoke.
const Key = "collections"

// Points owned by the collections plugin. All three are open to agent
// plugins; the judge's policy decides which contributions need a human.
const (
	// CollectionPoint takes a Collection: {name, fields}.
	CollectionPoint = "collection"
	// FieldPoint takes a FieldContribution: {collection, field}, adding a
	// field to a collection another plugin defines.
	FieldPoint = "collection-field"
	// HookPoint takes a Hook: {collection, on, when?, handler}.
	HookPoint = "collection-hook"
)

// TablePrefix is prepended to a collection's name to form its table name.
const TablePrefix = "c_"

// MaxNameLen is the longest collection name: the table name (TablePrefix
// plus the name) must still be a valid identifier.
const MaxNameLen = 39

// Limits of List.
const (
	// DefaultLimit is the page size when ListOptions.Limit is zero.
	DefaultLimit = 100
	// MaxLimit is the largest page size accepted; a larger one is an error.
	MaxLimit = 1000
)

// Columns every collection table has besides its fields. Field names may
// not take them.
const (
	ColumnID        = "id"
	ColumnCreatedAt = "created_at"
	ColumnUpdatedAt = "updated_at"
)

// FieldType is the type of a field's values.
type FieldType string

// Field types. JSON values are stored as text and read back decoded.
const (
	TypeText    FieldType = "text"
	TypeInteger FieldType = "integer"
	TypeReal    FieldType = "real"
	TypeBoolean FieldType = "boolean"
	TypeJSON    FieldType = "json"
)

// Field is one field of a collection. Required means a record may not hold
// null for it once Default has been applied. Default, when set, must be a
// value of Type; it fills the field on create and, when the field is added
// to a table that already has rows, is written into those rows once.
type Field struct {
	Name     string    `json:"name"`
	Type     FieldType `json:"type"`
	Required bool      `json:"required,omitempty"`
	Default  any       `json:"default,omitempty"`
}

// Collection is an item of CollectionPoint: a named set of records stored in
// the table TablePrefix+Name.
type Collection struct {
	Name   string  `json:"name"`
	Fields []Field `json:"fields"`
	// Public collections are read and written over REST with no
	// credential even when the kernel has credentials. Only system plugins
	// may declare one: an agent plugin that wants to expose data does it
	// through a route, which waits for a human.
	Public bool `json:"public,omitempty"`
}

// FieldContribution is an item of FieldPoint: one more field for a
// collection, typically one another plugin defines.
type FieldContribution struct {
	Collection string `json:"collection"`
	Field      Field  `json:"field"`
}

// Op is the write a hook reacts to.
type Op string

// Hook operations.
const (
	OpCreate Op = "create"
	OpUpdate Op = "update"
	OpDelete Op = "delete"
)

// When says whether a hook runs before or after the write.
type When string

// Hook timings. The empty When means WhenAfter.
const (
	// WhenBefore hooks run before the write; an error rejects the write.
	WhenBefore When = "before"
	// WhenAfter hooks run once the write is committed; an error is logged
	// and the write stands.
	WhenAfter When = "after"
)

// Hook is an item of HookPoint contributed by a system plugin. Agent plugins
// contribute the same shape as JSON, {collection, on, when?, handler}, whose
// handler is a function reference called with the HookEvent.
type Hook struct {
	Collection string   `json:"collection"`
	On         Op       `json:"on"`
	When       When     `json:"when,omitempty"`
	Handler    HookFunc `json:"-"`
}

// MaxHookDepth bounds hooks that write: a write made by a hook (through
// the ctx it was given) runs hooks one level deeper, and at this depth
// before hooks reject the write and after hooks are skipped, so a hook that
// keeps triggering itself ends instead of recursing without bound.
const MaxHookDepth = 8

// HookFunc reacts to a write. A hook that writes to a collection should
// pass on the ctx it was given, which carries its nesting depth.
type HookFunc func(ctx context.Context, e HookEvent) error

// HookEvent is what a hook receives. Record is the record being created or
// the record after an update (before hooks of an update see the merged
// values, still without the new updated_at); Previous is the record before
// an update or delete. Both are nil where they do not apply.
type HookEvent struct {
	Collection string `json:"collection"`
	On         Op     `json:"on"`
	When       When   `json:"when"`
	Record     Record `json:"record"`
	Previous   Record `json:"previous"`
}

// Record is one record: its fields plus id (int64), created_at and
// updated_at (RFC 3339 UTC text with milliseconds). Values have the Go type
// of their field: string, int64, float64, bool, or the decoded JSON value.
type Record map[string]any

// ListOptions select records. Where holds equality filters by field name
// (null matches null); Limit of zero means DefaultLimit. Records come back
// in id order.
type ListOptions struct {
	Where  map[string]any `json:"where,omitempty"`
	Limit  int            `json:"limit,omitempty"`
	Offset int            `json:"offset,omitempty"`
}

// Service is the value of Key. All methods are safe for concurrent use.
// Reads may be retried freely; a Create whose error leaves it unknown
// whether the row was written may have written it. Errors wrap ErrNotFound,
// ErrInvalid or ErrRejected when the caller can act on them.
type Service interface {
	// Invoke serves agent code: methods list, get, create, update, delete,
	// definition and definitions, with the arguments of the Go methods.
	kernel.Invoker
	// Definitions returns every collection currently defined, by name,
	// with the fields contributed to it through FieldPoint.
	Definitions() []Collection
	// Definition returns one collection's definition.
	Definition(name string) (Collection, error)
	// List returns the records matching opts, in id order.
	List(ctx context.Context, name string, opts ListOptions) ([]Record, error)
	// Get returns the record with the given id.
	Get(ctx context.Context, name string, id int64) (Record, error)
	// Create validates values, applies defaults, runs before hooks, inserts
	// the record, runs after hooks and returns the stored record.
	Create(ctx context.Context, name string, values map[string]any) (Record, error)
	// Update changes the given fields of a record (others keep their
	// values) and returns the stored record.
	Update(ctx context.Context, name string, id int64, values map[string]any) (Record, error)
	// Delete removes a record.
	Delete(ctx context.Context, name string, id int64) error
	// SetGuard installs the guard the REST routes and agent code (Invoke)
	// are checked against; Go callers are system code and are not. There
	// is one at a time: a second is refused until the returned function
	// removes the first.
	SetGuard(g Guard) (remove func(), err error)
}

// Guard decides what a REST caller or agent code may do to a collection:
// action is read, create, write or unlink, and the caller is the
// principal ctx carries. A collection declared Public skips it over REST.
type Guard interface {
	Can(ctx context.Context, collection, action string) error
}

// Errors the Service wraps; their messages name the collection and field.
var (
	// ErrNotFound: no such collection, or no record with that id.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: a value, field name or argument is not acceptable.
	ErrInvalid = errors.New("invalid")
	// ErrRejected: a before hook refused the write; nothing was written.
	ErrRejected = errors.New("rejected by a hook")
	// ErrForbidden: the guard refused the caller.
	ErrForbidden = errors.New("forbidden")
)

// Table returns the table name of a collection.
func Table(name string) string { return TablePrefix + name }
