package ledger

import "context"

// Store is the port through which the ledger persists runs. Implementations
// must be safe for concurrent use and must enforce, in storage, the same
// constraints [MemoryStore] does; the conformance kit in package storetest
// checks this. A store only keeps state: none of its methods may cause an
// effect outside its storage, and TestNoTransport refuses method names that
// suggest one.
type Store interface {
	// InsertRun stores run unless a run for the same (agent, tenant, period)
	// exists. It returns the stored run and true, or the existing run and
	// false. Atomicity against concurrent inserts of the same key must come
	// from storage (a unique constraint), not from a read before the write.
	// A run ID already used under another key yields ErrRunIDTaken. Safe to retry.
	InsertRun(ctx context.Context, run Run) (stored Run, inserted bool, err error)

	// LoadRun returns the run with the given ID, or ErrNotFound. Safe to retry.
	LoadRun(ctx context.Context, runID string) (Run, error)

	// UpdateRun replaces the mutable state of u.Run (spend, cursor, status,
	// reason, detail) if the stored version still equals u.Run.Version, and
	// increments the version. It returns ErrNotFound for an unknown run,
	// ErrConflict when the version moved or u.Step was already recorded,
	// ErrPlanImmutable when the plan or claim terms differ from the stored
	// ones, ErrInvalidEnding or ErrInvalidRun for states CheckRun refuses, and
	// ErrMissingFailureReason for a failed u.Step without a reason. The run
	// and step are written together or not at all. Retrying after
	// ErrConflict needs a fresh LoadRun.
	UpdateRun(ctx context.Context, u Update) error

	// LoadSteps returns the steps recorded for a run in index order; an
	// unknown run has none. Safe to retry.
	LoadSteps(ctx context.Context, runID string) ([]StepRecord, error)
}

// Update is one write to a run.
type Update struct {
	// Run is the new state. Its Version is the version it was derived from.
	Run Run
	// Step is the step this write records, or nil.
	Step *StepRecord
}
