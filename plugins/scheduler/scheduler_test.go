package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
	"github.com/sms-baseline/sms/plugins/scheduler"
)

// A job runs on the first tick, then whenever now minus its last run is at
// least everyMs, measured from the tick that ran it. Seen failing with the
// due test using > instead of >=, and with never-run jobs not treated as
// due.
func TestDue(t *testing.T) {
	rec := &recorder{}
	f := boot(t, openDB(t, ":memory:"), jobs("app.jobs", scheduler.Job{Name: "report", EveryMs: 60_000, Handler: rec.handle}))
	steps := []struct {
		at   time.Duration
		runs int
	}{
		{0, 1},                                 // never run: due at once
		{30 * time.Second, 1},                  // half an interval later
		{60*time.Second - time.Millisecond, 1}, // a millisecond short
		{60 * time.Second, 2},                  // exactly one interval
		{61 * time.Second, 2},                  // measured from the last run
		{119 * time.Second, 2},                 // one interval after +60s is +120s
		{10 * time.Minute, 3},                  // late ticks run once, not once per missed interval
		{10*time.Minute + 59*time.Second, 3},   // the next run counts from +10m
		{11 * time.Minute, 4},                  // one interval after +10m
		{11*time.Minute - 10*time.Second, 4},   // a clock set back runs nothing
		{11*time.Minute + 59999*time.Millisecond, 4},
	}
	for _, s := range steps {
		f.tick(t, s.at)
		if got := rec.count(); got != s.runs {
			t.Fatalf("after the tick at +%s: %d runs, want %d", s.at, got, s.runs)
		}
	}
	if got := rec.last(); got.Name != "report" || !got.Now.Equal(t0.Add(11*time.Minute)) ||
		got.LastRun == nil || !got.LastRun.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("last run = %+v, want report at +11m with last run +10m", got)
	}
}

// Last runs are persisted: a new kernel on the same database (a SQLite
// file, or a Postgres schema) neither runs a job again before it is due nor
// forgets it. Seen failing with save skipped (the restarted kernel ran the
// job at once).
func TestLastRunsSurviveRestart(t *testing.T) {
	for _, b := range []struct {
		name string
		open func(t *testing.T) func() contracts.Database
	}{{"sqlite", sqliteFile}, {"postgres", postgresSchema}} {
		t.Run(b.name, func(t *testing.T) { testRestart(t, b.open(t)) })
	}
}

func testRestart(t *testing.T, open func() contracts.Database) {
	rec := &recorder{}
	job := scheduler.Job{Name: "report", EveryMs: 60_000, Handler: rec.handle}

	db := open()
	f := boot(t, db, jobs("app.jobs", job))
	f.tick(t, 0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	f = boot(t, open(), jobs("app.jobs", job))
	f.tick(t, 30*time.Second)
	if got := rec.count(); got != 1 {
		t.Fatalf("runs after a restart before the job is due = %d, want 1", got)
	}
	f.tick(t, 60*time.Second)
	if got := rec.count(); got != 2 {
		t.Fatalf("runs after a restart once the job is due = %d, want 2", got)
	}
	if got := rec.last(); got.LastRun == nil || !got.LastRun.Equal(t0) {
		t.Fatalf("last run seen after the restart = %v, want %s", got.LastRun, t0)
	}
}

// A failing run is recorded with its error and counts as a run: the job is
// retried when next due, not on the next tick, and a success clears the
// error. Other due jobs still run. Seen failing with failed runs not
// recorded, with a failure recorded as never run (retried on the very next
// tick), and with Tick stopping at the first failure.
func TestFailingJob(t *testing.T) {
	flaky, steady := &recorder{fail: failFirst(2)}, &recorder{}
	f := boot(t, openDB(t, ":memory:"), jobs("app.jobs",
		scheduler.Job{Name: "flaky", EveryMs: 10_000, Handler: flaky.handle},
		scheduler.Job{Name: "panicky", EveryMs: 10_000, Handler: func(context.Context, scheduler.Run) error { panic("oops") }},
		scheduler.Job{Name: "steady", EveryMs: 10_000, Handler: steady.handle}))

	err := f.svc.Tick(context.Background(), t0)
	for _, want := range []string{`job "flaky" of plugin app.jobs: boom`, `job "panicky" of plugin app.jobs: handler panicked: oops`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("first tick = %v, want an error containing %q", err, want)
		}
	}
	if steady.count() != 1 {
		t.Fatalf("steady ran %d times in a tick where others failed, want 1", steady.count())
	}
	wantStatus(t, f, scheduler.JobStatus{Name: "flaky", LastError: "boom", Failures: 1, LastRun: at(0)})

	f.tick(t, time.Second) // not due: a failure is not retried on the next tick
	if flaky.count() != 1 {
		t.Fatalf("flaky ran %d times by +1s, want 1", flaky.count())
	}
	if err := f.svc.Tick(context.Background(), t0.Add(10*time.Second)); err == nil {
		t.Fatal("second due tick = nil, want flaky's second failure")
	}
	wantStatus(t, f, scheduler.JobStatus{Name: "flaky", LastError: "boom", Failures: 2, LastRun: at(10 * time.Second)})
	if err := f.svc.Tick(context.Background(), t0.Add(20*time.Second)); err == nil || strings.Contains(err.Error(), "flaky") {
		t.Fatalf("third due tick = %v, want only panicky's failure", err)
	}
	wantStatus(t, f, scheduler.JobStatus{Name: "flaky", Failures: 0, LastRun: at(20 * time.Second)})
	if flaky.count() != 3 || steady.count() != 3 {
		t.Fatalf("runs by +20s: flaky %d, steady %d; want 3 each", flaky.count(), steady.count())
	}
}

// wantStatus fails unless the job named like want has want's last run,
// last error and failure count.
func wantStatus(t *testing.T, f *fixture, want scheduler.JobStatus) {
	t.Helper()
	all, err := f.svc.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Name == want.Name {
			if s.LastError != want.LastError || s.Failures != want.Failures || s.LastRun == nil || !s.LastRun.Equal(*want.LastRun) {
				t.Fatalf("status of %s = %+v (last run %v), want last error %q, %d failures, last run %s",
					s.Name, s, s.LastRun, want.LastError, want.Failures, want.LastRun)
			}
			return
		}
	}
	t.Fatalf("jobs = %+v, want one named %s", all, want.Name)
}

// at returns t0+d.
func at(d time.Duration) *time.Time {
	t := t0.Add(d)
	return &t
}

// Job names are unique among live jobs, intervals at least a second, and a
// job needs a handler; a bad job fails only its own plugin. Seen failing
// with the registry's name check removed, and with MinEveryMs not enforced.
func TestInvalidJobs(t *testing.T) {
	noop := func(context.Context, scheduler.Run) error { return nil }
	fn := kernel.Func(func(context.Context, ...any) (any, error) { return nil, nil })
	cases := []struct {
		name string
		item any
		msg  string
	}{
		{"duplicate name", scheduler.Job{Name: "report", EveryMs: 5000, Handler: noop}, `job "report" is already scheduled by plugin app.jobs`},
		{"interval too short", scheduler.Job{Name: "fast", EveryMs: 999, Handler: noop}, `job "fast": everyMs 999 must be at least 1000`},
		{"no interval", &scheduler.Job{Name: "zero", Handler: noop}, `job "zero": everyMs 0 must be at least 1000`},
		{"no handler", scheduler.Job{Name: "idle", EveryMs: 1000}, `job "idle" has no handler`},
		{"empty name", scheduler.Job{EveryMs: 1000, Handler: noop}, `job name "" must be`},
		{"bad name", scheduler.Job{Name: "Daily Report", EveryMs: 1000, Handler: noop}, `job name "Daily Report" must be`},
		{"name too long", scheduler.Job{Name: strings.Repeat("a", 101), EveryMs: 1000, Handler: noop}, "at most 100 characters"},
		{"fractional interval", map[string]any{"name": "x", "everyMs": 1500.5, "handler": fn}, `job "x": everyMs 1500.5 must be a whole number`},
		{"handler not a function", map[string]any{"name": "x", "everyMs": 1000, "handler": "run"}, "job x: handler must be a function"},
		{"misspelled key", map[string]any{"name": "x", "every": 1000, "handler": fn}, `unknown field "every"`},
		{"not an object", "report", "a job is {name, everyMs, handler}, got string"},
		{"nil job", (*scheduler.Job)(nil), "nil *Job"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := boot(t, openDB(t, ":memory:"), jobs("app.jobs", scheduler.Job{Name: "report", EveryMs: 60_000, Handler: noop}))
			bad := kernel.Plugin{Manifest: kernel.Manifest{ID: "app.bad", Version: "1",
				Contributes: map[string][]any{scheduler.SchedulePoint: {tc.item}}}}
			err := f.add(bad)
			if kernel.CodeOf(err) != kernel.CodeValidation || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("contributing %v = %v, want a validation error containing %q", tc.item, err, tc.msg)
			}
			if v, _ := f.k.Fiber("app.jobs"); v.State != kernel.StateActive {
				t.Fatalf("app.jobs is %s after app.bad failed, want active", v.State)
			}
		})
	}
}

// An agent plugin's job runs through its function with the run as JSON,
// and stops the moment the plugin is disabled; enabling it again does not
// run it early. Seen failing with the schedule observer's Removed not
// withdrawing the job.
func TestAgentJob(t *testing.T) {
	ctx := context.Background()
	f := boot(t, openDB(t, ":memory:"))
	var runs []map[string]any
	f.exec.Register("nightly", func(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
		fn := u.Func("run", func(_ context.Context, args []any) (any, error) {
			runs = append(runs, args[0].(map[string]any))
			return nil, nil
		})
		_, err := h.Contribute(ctx, scheduler.SchedulePoint, kerneltest.JSON(map[string]any{"name": "nightly", "everyMs": 5000, "handler": fn}))
		return err
	})
	if err := kerneltest.Agent(ctx, f.k, kernel.Manifest{ID: "agent.nightly", Version: "1", Points: []string{scheduler.SchedulePoint}}, "nightly"); err != nil {
		t.Fatalf("propose agent.nightly: %v", err)
	}
	f.tick(t, 0)
	f.tick(t, 5*time.Second)
	if len(runs) != 2 || runs[0]["lastRun"] != nil || runs[1]["lastRun"] != "2030-01-02T03:04:05Z" || runs[1]["name"] != "nightly" {
		t.Fatalf("agent runs = %v, want two, the second with lastRun 2030-01-02T03:04:05Z", runs)
	}
	if err := f.k.Disable(ctx, "agent.nightly"); err != nil {
		t.Fatal(err)
	}
	f.tick(t, time.Minute)
	if len(runs) != 2 {
		t.Fatalf("runs after disabling = %d, want 2", len(runs))
	}
	if err := f.k.Enable(ctx, "agent.nightly"); err != nil {
		t.Fatal(err)
	}
	f.tick(t, 5*time.Second+4*time.Second)
	if len(runs) != 2 {
		t.Fatalf("runs after enabling again before due = %d, want 2", len(runs))
	}
}

// The scheduler key is system-only: agent plugins contribute jobs but
// cannot read or tick the scheduler. Seen failing with the key's consumer
// trust lowered to agent.
func TestSchedulerKeyIsSystemOnly(t *testing.T) {
	f := boot(t, openDB(t, ":memory:"))
	f.exec.Register("peek", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		_, err := h.Invoke(ctx, scheduler.Key, "tick", kerneltest.JSON([]any{}))
		return err
	})
	err := kerneltest.Agent(context.Background(), f.k, kernel.Manifest{ID: "agent.peek", Version: "1", Inject: []string{scheduler.Key}}, "peek")
	if kernel.CodeOf(err) != kernel.CodeTrust {
		t.Fatalf("agent invoking the scheduler = %v, want a trust error", err)
	}
}

// A cancelled context ends the tick before the next job starts; the run
// that was under way is still recorded. Seen failing with the context check
// in Tick removed, and with the run recorded under the cancelled context.
func TestTickCancelled(t *testing.T) {
	first, second := &recorder{}, &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	f := boot(t, openDB(t, ":memory:"), jobs("app.jobs",
		scheduler.Job{Name: "first", EveryMs: 1000, Handler: func(c context.Context, r scheduler.Run) error {
			cancel()
			return first.handle(c, r)
		}},
		scheduler.Job{Name: "second", EveryMs: 1000, Handler: second.handle}))
	err := f.svc.Tick(ctx, t0)
	if !errors.Is(err, context.Canceled) || second.count() != 0 {
		t.Fatalf("tick cancelled by the first job = %v with %d runs of the second, want context.Canceled and none", err, second.count())
	}
	if strings.Contains(err.Error(), "record run") {
		t.Fatalf("tick cancelled by the first job = %v, want the first run recorded", err)
	}
	wantStatus(t, f, scheduler.JobStatus{Name: "first", Failures: 0, LastRun: at(0)})
}
