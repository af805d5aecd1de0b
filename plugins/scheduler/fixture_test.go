package scheduler_test

import (
	"context"
	"crypto/rand"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/storetest"
	"github.com/sms-baseline/sms/drivers/store/postgres"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
	"github.com/sms-baseline/sms/plugins/scheduler"
)

// t0 is the time of the first tick in every test; ticks are given times,
// never read from a clock.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// sqliteFile returns an opener of one SQLite file in a temporary directory.
func sqliteFile(t *testing.T) func() contracts.Database {
	path := filepath.Join(t.TempDir(), "kernel.db")
	return func() contracts.Database { return openDB(t, path) }
}

// postgresSchema returns an opener of one fresh Postgres schema, dropped
// when the test ends. Without a server the test is skipped (or fails, with
// SMS_REQUIRE_POSTGRES).
func postgresSchema(t *testing.T) func() contracts.Database {
	url := storetest.PostgresURL(t)
	schema := "scheduler_" + strings.ToLower(rand.Text())
	open := func() contracts.Database {
		db, err := postgres.Open(context.Background(), postgres.Options{URL: url, Schema: schema})
		if err != nil {
			t.Fatalf("open postgres schema %s: %v", schema, err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	t.Cleanup(func() {
		db := open()
		if err := db.Exec(context.Background(), `DROP SCHEMA "`+schema+`" CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return open
}

func openDB(t *testing.T, path string) contracts.Database {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open sqlite %s: %v", path, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// dbPlugin provides the database key, as a composition root does.
func dbPlugin(db contracts.Database) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: "test.database", Version: "1", Provide: []string{contracts.DatabaseKey}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			if err := c.Kernel().DefineKey(contracts.DatabaseKey, contracts.DatabaseKeyMeta); err != nil {
				return err
			}
			return c.Provide(contracts.DatabaseKey, db)
		},
	}
}

// jobs is a declarative system plugin contributing jobs.
func jobs(id string, js ...scheduler.Job) kernel.Plugin {
	items := make([]any, len(js))
	for i, j := range js {
		items[i] = j
	}
	return kernel.Plugin{Manifest: kernel.Manifest{ID: id, Version: "1",
		Contributes: map[string][]any{scheduler.SchedulePoint: items}}}
}

type fixture struct {
	k    *kernel.Kernel
	exec *kerneltest.Executor
	svc  scheduler.Service
}

// boot starts a kernel with the database and scheduler plugins and the
// given plugins, failing the test unless every plugin activates.
func boot(t *testing.T, db contracts.Database, plugins ...kernel.Plugin) *fixture {
	t.Helper()
	f := &fixture{exec: kerneltest.NewExecutor()}
	f.k = kernel.New(kernel.Options{Executor: f.exec})
	for _, p := range append([]kernel.Plugin{dbPlugin(db), scheduler.Plugin()}, plugins...) {
		if err := f.k.Install(p); err != nil {
			t.Fatalf("install %s: %v", p.Manifest.ID, err)
		}
	}
	if err := f.k.Settle(context.Background()); err != nil {
		t.Fatalf("settle: %v", err)
	}
	v, err := f.k.GetValue(scheduler.Key)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = v.(scheduler.Service)
	return f
}

// add installs more plugins and settles, returning the settle error.
func (f *fixture) add(plugins ...kernel.Plugin) error {
	for _, p := range plugins {
		if err := f.k.Install(p); err != nil {
			return err
		}
	}
	return f.k.Settle(context.Background())
}

// tick ticks at t0+offset and fails the test on an error.
func (f *fixture) tick(t *testing.T, offset time.Duration) {
	t.Helper()
	if err := f.svc.Tick(context.Background(), t0.Add(offset)); err != nil {
		t.Fatalf("tick at +%s: %v", offset, err)
	}
}

// recorder is a job handler that records its runs and fails while fail
// returns an error.
type recorder struct {
	mu   sync.Mutex
	runs []scheduler.Run
	fail func(n int) error
}

func (r *recorder) handle(_ context.Context, run scheduler.Run) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, run)
	if r.fail != nil {
		return r.fail(len(r.runs))
	}
	return nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.runs)
}

func (r *recorder) last() scheduler.Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[len(r.runs)-1]
}

// failFirst fails the first n runs.
func failFirst(n int) func(int) error {
	return func(run int) error {
		if run <= n {
			return errors.New("boom")
		}
		return nil
	}
}
