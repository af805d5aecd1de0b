package scheduler

import (
	"context"
	"time"
)

// Key is the key whose value is the Service. It is system-only: agent
// plugins contribute jobs but never tick or inspect the scheduler.
const Key = "scheduler"

// SchedulePoint takes a Job: {name, everyMs, handler}. It is open to agent
// plugins; the judge's policy decides whether one needs a human.
const SchedulePoint = "schedule"

// RunsTable is the table that keeps each job's last run, by job name.
const RunsTable = "scheduler_runs"

// MinEveryMs is the shortest interval a job may ask for.
const MinEveryMs = 1000

// MaxNameLen is the longest job name.
const MaxNameLen = 100

// Job is an item of SchedulePoint contributed by a system plugin. Agent
// plugins contribute the same shape as JSON, {name, everyMs, handler}, whose
// handler is a function reference called with the Run. Names are unique
// among live jobs and identify the job's persisted last run.
type Job struct {
	Name    string  `json:"name"`
	EveryMs int64   `json:"everyMs"`
	Handler Handler `json:"-"`
}

// Handler runs a job once. An error (or a panic) is recorded as the run's
// failure.
type Handler func(ctx context.Context, run Run) error

// Run is what a handler receives. LastRun is the time of the previous run,
// failed or not, or nil when the job has never run.
type Run struct {
	Name    string     `json:"name"`
	Now     time.Time  `json:"now"`
	LastRun *time.Time `json:"lastRun"`
}

// JobStatus describes a live job and its persisted last run.
type JobStatus struct {
	Name    string `json:"name"`
	Plugin  string `json:"plugin"`
	EveryMs int64  `json:"everyMs"`
	// LastRun is nil when the job has never run.
	LastRun *time.Time `json:"lastRun"`
	// LastError is the error of the last run, empty when it succeeded.
	LastError string `json:"lastError,omitempty"`
	// Failures counts the runs that failed in a row, up to the last one.
	Failures int64 `json:"failures"`
}

// Service is the value of Key.
type Service interface {
	// Tick runs, one after another in contribution order, every live job
	// that is due at now: never run, or now minus its last run is at least
	// its interval. Each run is recorded in RunsTable as it ends, failed or
	// not, so the next run is due one interval after this one whatever the
	// outcome, and a restarted kernel neither repeats nor skips it. It
	// returns the failures joined, each naming its job and plugin; one
	// failing job does not stop the others. Ticks are serialized; the
	// caller decides their cadence (a ticker in the composition root).
	// A cancelled ctx stops the tick before the next job starts.
	Tick(ctx context.Context, now time.Time) error
	// Jobs returns the live jobs, in contribution order, with their last runs.
	Jobs(ctx context.Context) ([]JobStatus, error)
}
