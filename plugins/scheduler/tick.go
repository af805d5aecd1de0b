package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sms-baseline/sms/contracts"
)

// service is the Service of one activation of the plugin.
type service struct {
	db     contracts.Database
	logger *slog.Logger
	reg    registry
	tickMu sync.Mutex                                               // serializes ticks, so two never run one job twice
	actAs  func(ctx context.Context, plugin string) context.Context // Options.ActAs
	system func(plugin string) bool
	// budgets returns the kernel's budgets, or nil when it keeps none.
	budgets func() contracts.Budgets
	// requester is who asked for an agent plugin.
	requester func(plugin string) string
}

var _ Service = (*service)(nil)

// lastRun is one job's row of RunsTable. Times are Unix milliseconds, the
// unit of everyMs, so the due test is exact.
type lastRun struct {
	at       int64
	err      string
	failures int64
}

// migrate creates RunsTable if it is missing.
func (s *service) migrate(ctx context.Context) error {
	t, err := s.db.Dialect().Types()
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	table, err := contracts.QuoteIdent(RunsTable)
	if err != nil {
		return err
	}
	ddl := "CREATE TABLE IF NOT EXISTS " + table + ` ("name" ` + t.Text + ` PRIMARY KEY, "last_run" ` + t.BigInt +
		` NOT NULL, "last_error" ` + t.Text + `, "failures" ` + t.BigInt + " NOT NULL)"
	if err := s.db.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("create %s: %w", RunsTable, err)
	}
	return nil
}

// load reads every job's last run.
func (s *service) load(ctx context.Context) (map[string]lastRun, error) {
	rows, err := s.db.Query(ctx, `SELECT "name", "last_run", "last_error", "failures" FROM "`+RunsTable+`"`)
	if err != nil {
		return nil, fmt.Errorf("read last runs: %w", err)
	}
	out := make(map[string]lastRun, len(rows))
	for _, r := range rows {
		name, _ := r["name"].(string)
		at, ok := r["last_run"].(int64)
		if !ok {
			return nil, fmt.Errorf("read last runs: last_run of job %q is %T, want int64", name, r["last_run"])
		}
		msg, _ := r["last_error"].(string)
		failures, _ := r["failures"].(int64)
		out[name] = lastRun{at: at, err: msg, failures: failures}
	}
	return out, nil
}

// save records a run. Writing the same row twice is harmless, so a failed
// save may be retried.
func (s *service) save(ctx context.Context, name string, r lastRun) error {
	var msg any
	if r.err != "" {
		msg = r.err
	}
	_, err := s.db.Query(ctx, `INSERT INTO "`+RunsTable+`" ("name", "last_run", "last_error", "failures") VALUES (?, ?, ?, ?) `+
		`ON CONFLICT ("name") DO UPDATE SET "last_run" = excluded."last_run", "last_error" = excluded."last_error", `+
		`"failures" = excluded."failures"`, name, r.at, msg, r.failures)
	if err != nil {
		return fmt.Errorf("record run of job %q: %w", name, err)
	}
	return nil
}

func (s *service) Tick(ctx context.Context, now time.Time) error {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	jobs := s.reg.snapshot()
	if len(jobs) == 0 {
		return nil
	}
	runs, err := s.load(ctx)
	if err != nil {
		return fmt.Errorf("tick: %w", err)
	}
	var errs []error
	for _, e := range jobs {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("tick: %w", err))
			break
		}
		prev, seen := runs[e.job.Name]
		if seen && now.UnixMilli()-prev.at < e.job.EveryMs {
			continue
		}
		if err := s.run(ctx, e, now, prevRun(prev, seen)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// prevRun returns the previous run, or nil for a job that never ran.
func prevRun(prev lastRun, seen bool) *lastRun {
	if !seen {
		return nil
	}
	return &prev
}

// run runs one job and records the outcome.
func (s *service) run(ctx context.Context, e entry, now time.Time, prev *lastRun) error {
	r := Run{Name: e.job.Name, Now: now}
	next := lastRun{at: now.UnixMilli()}
	if prev != nil {
		t := time.UnixMilli(prev.at).UTC()
		r.LastRun = &t
		next.failures = prev.failures
	}
	runCtx := ctx
	if s.actAs != nil && !s.system(e.plugin) {
		runCtx = s.actAs(ctx, e.plugin)
	}
	runErr := s.accounted(runCtx, e, now, func() error { return call(runCtx, e.job.Handler, r) })
	if runErr != nil {
		next.err, next.failures = runErr.Error(), next.failures+1
		runErr = fmt.Errorf("job %q of plugin %s: %w", e.job.Name, e.plugin, runErr)
	} else {
		next.failures = 0
	}
	// The run happened: record it even if ctx was cancelled meanwhile.
	return errors.Join(runErr, s.save(context.WithoutCancel(ctx), e.job.Name, next))
}

// call runs a handler; a panic becomes its error.
func call(ctx context.Context, h Handler, r Run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return h(ctx, r)
}

func (s *service) Jobs(ctx context.Context) ([]JobStatus, error) {
	runs, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	jobs := s.reg.snapshot()
	out := make([]JobStatus, len(jobs))
	for i, e := range jobs {
		out[i] = JobStatus{Name: e.job.Name, Plugin: e.plugin, EveryMs: e.job.EveryMs}
		if r, ok := runs[e.job.Name]; ok {
			t := time.UnixMilli(r.at).UTC()
			out[i].LastRun, out[i].LastError, out[i].Failures = &t, r.err, r.failures
		}
	}
	return out, nil
}
