package orm

import (
	"context"
	"errors"
)

// Key is the key whose value is the Service. It is system-only both ways:
// the Service can act as sudo, so agent code never holds it.
const Key = "orm"

// UserKey is the agent-facing key. Its value answers cap.invoke('orm-user',
// method, ...args) with every operation run as the user being served (the
// caller of the route or chat turn), never as sudo, and with no argument
// that could name another user.
const UserKey = "orm-user"

// Points owned by the ORM. All five are open to agent plugins; the judge's
// default policy sends the last four to a human.
const (
	// ModelPoint takes a Model: a table m_<name> and its fields.
	ModelPoint = "model"
	// FieldPoint takes a FieldContribution: one more field of a model
	// another plugin declares.
	FieldPoint = "model-field"
	// MethodPoint takes a Method: a named function of a model, also what
	// computed fields call.
	MethodPoint = "model-method"
	// HookPoint takes a Hook run before or after a create, write or unlink.
	HookPoint = "model-hook"
	// OnchangePoint takes an Onchange: what a form changes when a field does.
	OnchangePoint = "model-onchange"
)

// MaxNameLen is the longest model name (its table name must still be a
// valid identifier).
const MaxNameLen = 39

// Columns and fields every model has. Declared fields may not take them.
const (
	FieldID        = "id"
	FieldDisplay   = "display" // computed from the model's DisplayField
	FieldCreatedAt = "created_at"
	FieldUpdatedAt = "updated_at"
	FieldCreatedBy = "created_by"
	FieldUpdatedBy = "updated_by"
)

// Limits of Search.
const (
	// DefaultLimit is the page size when SearchOptions.Limit is zero.
	DefaultLimit = 100
	// MaxLimit is the largest page size accepted.
	MaxLimit = 10000
)

// Kind is the kind of a field.
type Kind string

// Field kinds. Dates are stored as text YYYY-MM-DD and datetimes as
// RFC 3339 UTC text with milliseconds, so both compare and sort in time
// order on every driver.
const (
	KindChar     Kind = "char"
	KindText     Kind = "text"
	KindInt      Kind = "int"
	KindFloat    Kind = "float"
	KindBool     Kind = "bool"
	KindDate     Kind = "date"
	KindDatetime Kind = "datetime"
	KindJSON     Kind = "json"
	// KindBinary holds a file in the object store (contracts.ObjectStore):
	// the record keeps a Binary, set only by uploading to RESTPath/{model}/
	// {id}/{field}.
	KindBinary    Kind = "binary"
	KindSelection Kind = "selection"
	KindMany2One  Kind = "many2one"
	KindOne2Many  Kind = "one2many"
	KindMany2Many Kind = "many2many"
	KindComputed  Kind = "computed"
	KindRelated   Kind = "related"
)

// OnDelete is what unlinking a many2one's target does to the records
// pointing at it.
type OnDelete string

// OnDelete policies. The empty one means OnDeleteSetNull.
const (
	OnDeleteRestrict OnDelete = "restrict"
	OnDeleteCascade  OnDelete = "cascade"
	OnDeleteSetNull  OnDelete = "set null"
)

// Default values with a meaning: the acting user's id, the current
// datetime and today's date.
const (
	DefaultUID   = "$uid"
	DefaultNow   = "$now"
	DefaultToday = "$today"
)

// Option is one value of a selection field.
type Option struct {
	Value string `json:"value"`
	Label string `json:"label,omitempty"`
}

// Field declares one field. Which attributes apply depends on Kind.
type Field struct {
	Kind     Kind   `json:"kind"`
	Label    string `json:"label,omitempty"`
	Required bool   `json:"required,omitempty"`
	// Default fills the field on create when no value is given; a string
	// DefaultUID, DefaultNow or DefaultToday is resolved at that moment.
	Default any `json:"default,omitempty"`
	// Options are the values of a selection.
	Options []Option `json:"options,omitempty"`
	// Target is the model a many2one, one2many or many2many points at.
	Target string `json:"target,omitempty"`
	// OnDelete applies to a many2one.
	OnDelete OnDelete `json:"onDelete,omitempty"`
	// Inverse is the many2one field of Target that a one2many reads.
	Inverse string `json:"inverse,omitempty"`
	// Compute names the model-method a computed field calls, Returns the
	// kind of its values and Depends the fields (dotted paths) it reads.
	Compute string   `json:"compute,omitempty"`
	Returns Kind     `json:"returns,omitempty"`
	Depends []string `json:"depends,omitempty"`
	// Path is a related field's dotted path through many2one fields.
	Path string `json:"path,omitempty"`
}

// Model is an item of ModelPoint.
type Model struct {
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Fields      map[string]Field `json:"fields"`
	// DisplayField is the field whose value is a record's display; the
	// default is "name" when the model has one, else "<model>,<id>".
	DisplayField string `json:"displayField,omitempty"`
	// Order is the default order of searches, such as "number desc".
	Order string `json:"order,omitempty"`
}

// FieldContribution is an item of FieldPoint.
type FieldContribution struct {
	Model string `json:"model"`
	Name  string `json:"name"`
	Field Field  `json:"field"`
}

// Method is an item of MethodPoint contributed by a system plugin. Agent
// plugins contribute {model, name, handler} whose handler is called with
// (env, ids, {records, args}) and answers JSON.
type Method struct {
	Model   string     `json:"model"`
	Name    string     `json:"name"`
	Handler MethodFunc `json:"-"`
}

// MethodRequest names a method of a model and what to call it with.
type MethodRequest struct {
	Method string         `json:"method"`
	IDs    []int64        `json:"ids"`
	Args   map[string]any `json:"args,omitempty"`
}

// MethodFunc runs a model method.
type MethodFunc func(ctx context.Context, call MethodCall) (any, error)

// MethodCall is what a method receives: the records' stored scalar
// values (for a compute, what it needs to answer {id: value}) and the
// caller's arguments. Orm is set for system handlers only.
type MethodCall struct {
	Model   string         `json:"model"`
	IDs     []int64        `json:"ids"`
	Records []Record       `json:"records"`
	Args    map[string]any `json:"args,omitempty"`
	Op      OpContext      `json:"ctx"`
	Orm     Service        `json:"-"`
}

// Event names a write.
type Event string

// Events hooks and listeners react to.
const (
	EventCreate Event = "create"
	EventWrite  Event = "write"
	EventUnlink Event = "unlink"
)

// When says whether a hook runs before or after the write.
type When string

// Hook timings; the empty When means WhenAfter.
const (
	// WhenBefore hooks run before the transaction; an error rejects the
	// write and nothing is applied.
	WhenBefore When = "before"
	// WhenAfter hooks run once the write is committed; an error is logged.
	WhenAfter When = "after"
)

// Hook is an item of HookPoint contributed by a system plugin. Agent
// plugins contribute {model, on, when?, handler}; their handler receives
// the Change as JSON.
type Hook struct {
	Model   string   `json:"model"`
	On      Event    `json:"on"`
	When    When     `json:"when,omitempty"`
	Handler HookFunc `json:"-"`
}

// HookFunc reacts to a write.
type HookFunc func(ctx context.Context, c Change) error

// Change describes a write: the records' ids (none yet before a create)
// and the values written. After a write, Tracked holds, per record, the
// fields tracked with Service.Track whose stored value the write changed.
type Change struct {
	Model   string                       `json:"model"`
	Event   Event                        `json:"on"`
	When    When                         `json:"when,omitempty"`
	IDs     []int64                      `json:"ids"`
	Values  map[string]any               `json:"values,omitempty"`
	Op      OpContext                    `json:"ctx"`
	Tracked map[int64]map[string]Tracked `json:"tracked,omitempty"`
}

// Tracked is a tracked field's value before and after a write, as Read
// answers a scalar (a many2one's id).
type Tracked struct {
	Old any `json:"old"`
	New any `json:"new"`
}

// Listener is called after every committed write of the event it was
// registered for (Service.On).
type Listener func(ctx context.Context, c Change)

// Onchange is an item of OnchangePoint contributed by a system plugin.
// Agent plugins contribute {model, field, handler}; the handler receives
// {model, field, values, ctx} and answers the values to change.
type Onchange struct {
	Model   string       `json:"model"`
	Field   string       `json:"field"`
	Handler OnchangeFunc `json:"-"`
}

// OnchangeFunc answers the values a form should change.
type OnchangeFunc func(ctx context.Context, e OnchangeEvent) (map[string]any, error)

// OnchangeEvent is the form being edited.
type OnchangeEvent struct {
	Model  string         `json:"model"`
	Field  string         `json:"field"`
	Values map[string]any `json:"values"`
	Op     OpContext      `json:"ctx"`
}

// OpContext is who an operation runs for. Sudo bypasses the guard; it is
// set only by system code (Sudo) and never reaches agent code.
type OpContext struct {
	UserID int64 `json:"userId,omitempty"`
	Admin  bool  `json:"admin,omitempty"`
	Sudo   bool  `json:"sudo,omitempty"`
}

// WithOp returns ctx carrying op: the operations run with ctx act for it.
// It clears a Sudo made earlier on ctx unless op itself says Sudo.
func WithOp(ctx context.Context, op OpContext) context.Context {
	return context.WithValue(context.WithValue(ctx, opKey{}, op), sudoKey{}, op.Sudo)
}

// WithoutOp returns ctx carrying no OpContext and no Sudo: the operations
// run with it act for whom ContextOf says the request or chat turn is
// (the principal ctx carries), as a REST call does.
func WithoutOp(ctx context.Context) context.Context {
	return context.WithValue(context.WithValue(ctx, opKey{}, nil), sudoKey{}, false)
}

// Sudo returns ctx with the guard bypassed, acting for the same user: the
// OpContext ctx carries, or the one ContextOf derives from the request
// ctx serves.
func Sudo(ctx context.Context) context.Context {
	return context.WithValue(ctx, sudoKey{}, true)
}

// Domain is a filter in prefix notation: terms [path, operator, value]
// joined by "&" (implicit between consecutive terms), "|" and "!".
// Operators: = != < <= > >= in "not in" like ilike. Paths may cross
// relations with dots (partner.country.code).
type Domain []any

// SearchOptions page and order a search. Order is "field [asc|desc], ...";
// the default is the model's Order, then id.
type SearchOptions struct {
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
	Order  string `json:"order,omitempty"`
}

// ReadSpec says which fields Read returns: each key a field, each value
// the spec of the records a relational field points at (empty for their
// ids and displays). A nil spec reads every field but x2many ones' records.
type ReadSpec map[string]ReadSpec

// Record is one record as Read returns it.
type Record map[string]any

// GroupRequest is a grouped read. GroupBy lists fields, dates and
// datetimes optionally with :day, :week (the Monday, as YYYY-MM-DD),
// :month (YYYY-MM) or :year (YYYY). Aggregates map an output name to
// "count" or "sum|avg|min|max:field".
// Limit cuts the groups at that many; without one, more than MaxLimit
// groups is an error rather than a silently cut answer.
type GroupRequest struct {
	Domain     Domain            `json:"domain,omitempty"`
	GroupBy    []string          `json:"groupBy"`
	Aggregates map[string]string `json:"aggregates,omitempty"`
	Limit      int               `json:"limit,omitempty"`
}

// Group is one group: the GroupBy values under their names (with the
// granularity suffix), "count" and each aggregate.
type Group map[string]any

// Action is what a guard is asked about.
type Action string

// Actions.
const (
	ActionRead   Action = "read"
	ActionCreate Action = "create"
	ActionWrite  Action = "write"
	ActionUnlink Action = "unlink"
)

// GuardRequest is one question to the guard.
type GuardRequest struct {
	Op     OpContext
	Model  string
	Action Action
}

// Guard is how an access-control plugin narrows the ORM. Can refuses an
// operation outright (its error is the caller's, wrapped in ErrForbidden);
// Domain narrows it to the records the domain matches (nil for all). Both
// are called on every operation that is not sudo, concurrently.
type Guard interface {
	Can(ctx context.Context, r GuardRequest) error
	Domain(ctx context.Context, r GuardRequest) (Domain, error)
}

// GuardFuncs adapts two functions to a Guard; a nil one allows everything.
type GuardFuncs struct {
	CanFunc    func(ctx context.Context, r GuardRequest) error
	DomainFunc func(ctx context.Context, r GuardRequest) (Domain, error)
}

// Service is the value of Key. Every method is safe for concurrent use and
// acts for the OpContext its ctx carries (the zero one when none: an
// anonymous user the guard decides about). Reads may be retried; a write
// whose error leaves its outcome unknown (a lost connection at commit) may
// have been applied. Errors are *Error values wrapping ErrNotFound,
// ErrInvalid, ErrForbidden, ErrConflict or ErrRejected.
type Service interface {
	// Models lists the names of the declared models.
	Models() []string
	// Spec returns a model's resolved schema, what a UI renders forms from.
	Spec(model string) (ModelSpec, error)
	// Search returns the ids of the records matching domain.
	Search(ctx context.Context, model string, domain Domain, opts SearchOptions) ([]int64, error)
	// Count returns how many records match domain.
	Count(ctx context.Context, model string, domain Domain) (int64, error)
	// Read returns the records with ids, in that order, as spec says.
	Read(ctx context.Context, model string, ids []int64, spec ReadSpec) ([]Record, error)
	// Create creates one record, with x2many commands, in one transaction.
	Create(ctx context.Context, model string, values map[string]any) (int64, error)
	// Write changes records, with x2many commands, in one transaction.
	Write(ctx context.Context, model string, ids []int64, values map[string]any) error
	// Unlink deletes records, applying every onDelete, in one transaction.
	Unlink(ctx context.Context, model string, ids []int64) error
	// ReadGroup answers grouped aggregates.
	ReadGroup(ctx context.Context, model string, req GroupRequest) ([]Group, error)
	// Call runs a model method on records.
	Call(ctx context.Context, model string, call MethodRequest) (any, error)
	// Onchange asks the model's onchanges what to change when field changes.
	Onchange(ctx context.Context, model, field string, values map[string]any) (map[string]any, error)
	// On registers a listener called after each committed write of event;
	// the returned function removes it.
	On(event Event, fn Listener) (remove func())
	// Track makes every later write of model that changes one of fields
	// report the old and new values in its Change.Tracked (after hooks and
	// listeners see it); the returned function undoes this call. Only
	// stored scalar fields are tracked; tracking costs two reads of those
	// columns in the write's transaction.
	Track(model string, fields []string) (remove func())
	// SetGuard installs the guard. There is one at a time: a second is
	// refused until the returned function removes the first.
	SetGuard(g Guard) (remove func(), err error)
}

// ModelSpec is a model's resolved schema.
type ModelSpec struct {
	Name         string      `json:"name"`
	Description  string      `json:"description,omitempty"`
	Plugin       string      `json:"plugin"`
	DisplayField string      `json:"displayField,omitempty"`
	Order        string      `json:"order,omitempty"`
	Fields       []FieldSpec `json:"fields"`
}

// FieldSpec is one field of a ModelSpec. Plugin is who declared it (empty
// for the fields every model has); Stored says whether it has a column.
type FieldSpec struct {
	Name string `json:"name"`
	Field
	Plugin   string `json:"plugin,omitempty"`
	Stored   bool   `json:"stored"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// Errors the Service wraps; branch with errors.Is.
var (
	// ErrNotFound: no such record (or none this user may see), method.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: an unknown model or field, or a value, domain, spec or
	// argument that is not acceptable.
	ErrInvalid = errors.New("invalid")
	// ErrForbidden: the guard refused the operation.
	ErrForbidden = errors.New("forbidden")
	// ErrConflict: an onDelete restrict blocks an unlink.
	ErrConflict = errors.New("conflict")
	// ErrRejected: a before hook refused the write.
	ErrRejected = errors.New("rejected by a hook")
	// ErrBusy: the reads in flight hold the whole read budget
	// (Options.ReadBudget); the read was refused at once and may be retried.
	ErrBusy = errors.New("busy")
)

// Error is the error the Service returns for what a caller can act on. It
// names the model and, where one is at fault, the field or domain term.
type Error struct {
	Kind  error  // one of the Err values
	Model string // the model at fault
	Field string // the field at fault, if any
	Term  string // the domain term at fault, if any, as JSON
	Msg   string
}
