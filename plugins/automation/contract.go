package automation

import (
	"context"
	"time"

	"github.com/sms-baseline/sms/plugins/orm"
)

// PluginID is the id of the automation system plugin.
const PluginID = "sms.automation"

// Key is the key whose value is the Service; system only.
const Key = "automation"

// Point takes an Automation; open to agent plugins (sensitive by default).
const Point = "automation"

// RunsTable keeps the last run of each periodic automation, by name.
const RunsTable = "automation_runs"

// TickJob is the scheduler job that runs the periodic automations.
const TickJob = "automation.tick"

// Bounds.
const (
	// MaxPerModel is the most automations one model may have.
	MaxPerModel = 32
	// MaxChainDepth is how deep automations may trigger automations.
	MaxChainDepth = 4
	// MaxRecords is the most records one run acts on.
	MaxRecords = 1000
	// MaxQueue is how many runs an agent plugin's automation may have
	// waiting.
	MaxQueue = 64
	// MinEveryMinutes and MaxEveryMinutes bound a periodic automation.
	MinEveryMinutes = 1
	MaxEveryMinutes = 366 * 24 * 60
	// MaxNameLen is the longest automation name.
	MaxNameLen = 100
	// DefaultRunTimeout is the time one run may take (Options.RunTimeout).
	DefaultRunTimeout = 5 * time.Second
)

// Trigger says when an automation runs.
type Trigger string

// Triggers.
const (
	OnCreate Trigger = "create"
	OnWrite  Trigger = "write"
	OnUnlink Trigger = "unlink"
	// OnTime runs every EveryMinutes.
	OnTime Trigger = "time"
)

// ActionKind says what an automation does.
type ActionKind string

// Actions.
const (
	// ActMethod calls the model method Method on the records with Args.
	ActMethod ActionKind = "method"
	// ActWrite writes Values to the records.
	ActWrite ActionKind = "write"
	// ActNote posts Body as an audit note on each record.
	ActNote ActionKind = "note"
	// ActHandler calls Handler with the Event.
	ActHandler ActionKind = "handler"
)

// Automation is an item of Point. Agent plugins contribute the same JSON
// shape, whose action's handler is a function.
type Automation struct {
	Name    string  `json:"name"`
	Model   string  `json:"model"`
	Trigger Trigger `json:"trigger"`
	// Watch (OnWrite only) runs the automation only for records whose
	// stored value of one of these fields the write changed.
	Watch []string `json:"watch,omitempty"`
	// Filter runs it only for the records that match it once the write
	// committed (OnTime: the records it acts on).
	Filter       orm.Domain `json:"filter,omitempty"`
	EveryMinutes int        `json:"everyMinutes,omitempty"`
	Action       Action     `json:"action"`
	// Sudo runs it past the guard; system plugins only.
	Sudo bool `json:"sudo,omitempty"`
}

// Action is what an automation does.
type Action struct {
	Kind    ActionKind     `json:"kind"`
	Method  string         `json:"method,omitempty"`
	Args    map[string]any `json:"args,omitempty"`
	Values  map[string]any `json:"values,omitempty"`
	Body    string         `json:"body,omitempty"`
	Handler Handler        `json:"-"`
}

// Handler runs an ActHandler action.
type Handler func(ctx context.Context, e Event) error

// Event is what a run acts on: the records, and for a write the values
// written and the tracked changes.
type Event struct {
	Automation string                           `json:"automation"`
	Model      string                           `json:"model"`
	Trigger    Trigger                          `json:"trigger"`
	IDs        []int64                          `json:"ids"`
	Values     map[string]any                   `json:"values,omitempty"`
	Tracked    map[int64]map[string]orm.Tracked `json:"tracked,omitempty"`
	Now        time.Time                        `json:"now"`
}

// Status is an automation with its runs.
type Status struct {
	Name    string  `json:"name"`
	Plugin  string  `json:"plugin"`
	Model   string  `json:"model"`
	Trigger Trigger `json:"trigger"`
	// Runs counts the runs since the kernel started and Failures those
	// that failed; Skipped counts the firings refused for the chain's
	// depth and Dropped those refused because the queue was full.
	Runs      int64      `json:"runs"`
	Failures  int64      `json:"failures"`
	Skipped   int64      `json:"skipped"`
	Dropped   int64      `json:"dropped"`
	LastError string     `json:"lastError,omitempty"`
	LastRun   *time.Time `json:"lastRun,omitempty"`
}

// Service is the value of Key.
type Service interface {
	// Statuses lists the live automations with their runs.
	Statuses(ctx context.Context) ([]Status, error)
	// Idle waits until no agent plugin's automation has a run queued or
	// running, or ctx ends.
	Idle(ctx context.Context) error
}

// Options configure the plugin.
type Options struct {
	// ActAs says who an agent plugin's automations act for (the
	// scheduler's and the ORM's ActAs); nil acts for the writer's request.
	ActAs func(ctx context.Context, plugin string) context.Context
	// RunTimeout bounds one run; DefaultRunTimeout when zero.
	RunTimeout time.Duration
	// Now is the clock of periodic runs; time.Now when nil.
	Now func() time.Time
}
