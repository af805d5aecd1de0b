package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sms-baseline/sms/ledger"
)

// DB is the part of pgx the store uses. *pgxpool.Pool, *pgx.Conn and pgx.Tx
// all satisfy it.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Store implements ledger.Store on the schema installed by [Migrate]. It is
// as safe for concurrent use as its DB: a pool is, a single connection or
// transaction is not. Every method may be retried after a connection error;
// UpdateRun is a compare-and-set on the run's version, so a retry after an
// ambiguous failure yields ledger.ErrConflict rather than a double write.
type Store struct {
	db DB
}

var _ ledger.Store = (*Store)(nil)

// New returns a store over db.
func New(db DB) *Store {
	return &Store{db: db}
}

const runColumns = `run_id, agent, tenant_key, period, plan_json, ceiling_minor, currency,
	spent_minor, step_cursor, status, reason, detail, version`

// InsertRun implements ledger.Store. The insert skips on any unique
// conflict; the follow-up read tells a lost claim (same key) from a reused
// run ID (different key).
func (s *Store) InsertRun(ctx context.Context, run ledger.Run) (ledger.Run, bool, error) {
	plan, err := json.Marshal(run.Plan)
	if err != nil {
		return ledger.Run{}, false, fmt.Errorf("insert run: encode plan: %w", err)
	}
	row := s.db.QueryRow(ctx, `insert into ledger.runs (`+runColumns+`)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		on conflict do nothing
		returning `+runColumns,
		run.RunID, run.Agent, run.TenantKey, run.Period, string(plan), run.Ceiling.AmountMinor, run.Ceiling.Currency,
		run.SpentMinor, run.Cursor, string(run.Status), string(run.Reason), run.Detail, run.Version)
	stored, err := scanRun(row)
	if err == nil {
		return stored, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return ledger.Run{}, false, fmt.Errorf("insert run: %w", mapError(err))
	}
	existing, err := scanRun(s.db.QueryRow(ctx, `select `+runColumns+` from ledger.runs
		where agent = $1 and tenant_key = $2 and period = $3`, run.Agent, run.TenantKey, run.Period))
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Run{}, false, fmt.Errorf("insert run: %w", ledger.ErrRunIDTaken)
	}
	if err != nil {
		return ledger.Run{}, false, fmt.Errorf("insert run: load existing: %w", err)
	}
	return existing, false, nil
}

// LoadRun implements ledger.Store.
func (s *Store) LoadRun(ctx context.Context, runID string) (ledger.Run, error) {
	run, err := scanRun(s.db.QueryRow(ctx, `select `+runColumns+` from ledger.runs where run_id = $1`, runID))
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Run{}, ledger.ErrNotFound
	}
	if err != nil {
		return ledger.Run{}, fmt.Errorf("load run: %w", err)
	}
	return run, nil
}

// The update writes the claim terms too, so that the immutability trigger,
// not this code, is what refuses a changed plan.
const updateRun = `update ledger.runs set
		agent = $3, tenant_key = $4, period = $5, plan_json = $6, ceiling_minor = $7, currency = $8,
		spent_minor = $9, step_cursor = $10, status = $11, reason = $12, detail = $13,
		version = version + 1, updated_at = now()
	where run_id = $1 and version = $2`

const updateRunWithStep = `with updated as (` + updateRun + ` returning run_id, tenant_key)
	insert into ledger.steps (run_id, idx, tenant_key, ok, failure_reason, spent_minor)
	select run_id, $14, tenant_key, $15, $16, $17 from updated`

// UpdateRun implements ledger.Store. The run and its step are written by one
// statement, so they commit together even outside a transaction.
func (s *Store) UpdateRun(ctx context.Context, u ledger.Update) error {
	r := u.Run
	plan, err := json.Marshal(r.Plan)
	if err != nil {
		return fmt.Errorf("update run: encode plan: %w", err)
	}
	sql := updateRun
	args := []any{r.RunID, r.Version, r.Agent, r.TenantKey, r.Period, string(plan), r.Ceiling.AmountMinor,
		r.Ceiling.Currency, r.SpentMinor, r.Cursor, string(r.Status), string(r.Reason), r.Detail}
	if u.Step != nil {
		sql = updateRunWithStep
		args = append(args, u.Step.Index, u.Step.OK, u.Step.FailureReason, u.Step.SpentMinor)
	}
	tag, err := s.db.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("update run: %w", mapError(err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	return s.missedUpdate(ctx, r)
}

// missedUpdate explains an update that matched no row: the run is unknown
// (or belongs to another tenant), or its version moved on.
func (s *Store) missedUpdate(ctx context.Context, r ledger.Run) error {
	var version int64
	err := s.db.QueryRow(ctx, `select version from ledger.runs where run_id = $1`, r.RunID).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	return fmt.Errorf("%w: version is %d, update is based on %d", ledger.ErrConflict, version, r.Version)
}

// LoadSteps implements ledger.Store.
func (s *Store) LoadSteps(ctx context.Context, runID string) ([]ledger.StepRecord, error) {
	rows, err := s.db.Query(ctx, `select idx, ok, failure_reason, spent_minor
		from ledger.steps where run_id = $1 order by idx`, runID)
	if err != nil {
		return nil, fmt.Errorf("load steps: %w", err)
	}
	steps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ledger.StepRecord, error) {
		var s ledger.StepRecord
		err := row.Scan(&s.Index, &s.OK, &s.FailureReason, &s.SpentMinor)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("load steps: %w", err)
	}
	return steps, nil
}

func scanRun(row pgx.Row) (ledger.Run, error) {
	var (
		r              ledger.Run
		plan           []byte
		status, reason string
	)
	err := row.Scan(&r.RunID, &r.Agent, &r.TenantKey, &r.Period, &plan, &r.Ceiling.AmountMinor,
		&r.Ceiling.Currency, &r.SpentMinor, &r.Cursor, &status, &reason, &r.Detail, &r.Version)
	if err != nil {
		return ledger.Run{}, err
	}
	if err := json.Unmarshal(plan, &r.Plan); err != nil {
		return ledger.Run{}, fmt.Errorf("decode plan of run %q: %w", r.RunID, err)
	}
	r.Status, r.Reason = ledger.Status(status), ledger.Reason(reason)
	return r, nil
}
