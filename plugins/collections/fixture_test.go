package collections_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http/httptest"
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
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// backend opens an empty database for one test.
type backend struct {
	name string
	open func(t *testing.T) contracts.Database
}

// backends are the databases the migration and CRUD tests run on. The
// Postgres one skips (or fails, with SMS_REQUIRE_POSTGRES) without a server.
var backends = []backend{{"sqlite", openSQLite}, {"postgres", openPostgres}}

func openSQLite(t *testing.T) contracts.Database {
	t.Helper()
	db, err := sqlite.Open(context.Background(), sqlite.Memory)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// openPostgres opens a fresh schema and drops it when the test ends.
func openPostgres(t *testing.T) contracts.Database {
	t.Helper()
	url := storetest.PostgresURL(t)
	schema := "collections_" + strings.ToLower(rand.Text())
	db, err := postgres.Open(context.Background(), postgres.Options{URL: url, Schema: schema})
	if err != nil {
		t.Fatalf("open postgres schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if err := db.Exec(context.Background(), `DROP SCHEMA "`+schema+`" CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		_ = db.Close()
	})
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

// app is a declarative system plugin.
func app(id string, contributes map[string][]any) kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: id, Version: "1", Contributes: contributes}}
}

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type fixture struct {
	k     *kernel.Kernel
	exec  *kerneltest.Executor
	db    contracts.Database
	clock *clock
	srv   smshttp.Service
	svc   collections.Service
}

// boot starts a kernel with the database, http and collections plugins and
// the given plugins, and fails the test unless every plugin activates.
func boot(t *testing.T, db contracts.Database, plugins ...kernel.Plugin) *fixture {
	t.Helper()
	return bootWith(t, smshttp.Options{}, db, plugins...)
}

// bootWith is boot with the http plugin's options (its credentials).
func bootWith(t *testing.T, opts smshttp.Options, db contracts.Database, plugins ...kernel.Plugin) *fixture {
	t.Helper()
	f := &fixture{exec: kerneltest.NewExecutor(), db: db, clock: newClock()}
	f.k = kernel.New(kernel.Options{Executor: f.exec})
	all := append([]kernel.Plugin{dbPlugin(db), smshttp.Plugin(opts), collections.New(collections.Options{Now: f.clock.Now})}, plugins...)
	for _, p := range all {
		if err := f.k.Install(p); err != nil {
			t.Fatalf("install %s: %v", p.Manifest.ID, err)
		}
	}
	if err := f.k.Settle(context.Background()); err != nil {
		t.Fatalf("settle: %v", err)
	}
	v, err := f.k.GetValue(smshttp.Key)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = v.(smshttp.Service)
	v, err = f.k.GetValue(collections.Key)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = v.(collections.Service)
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

type result struct {
	status int
	body   string
}

// req is one HTTP request; an empty body sends none.
type req struct{ method, path, body string }

func (r req) String() string { return strings.TrimSpace(r.method + " " + r.path + " " + r.body) }

func (f *fixture) do(r req) result {
	hr := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
	if r.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, hr)
	raw, _ := io.ReadAll(rec.Body)
	return result{rec.Code, strings.TrimSpace(string(raw))}
}

// want does a request and fails unless it answers status; it returns the
// decoded body.
func (f *fixture) want(t *testing.T, status int, r req) map[string]any {
	t.Helper()
	got := f.do(r)
	if got.status != status {
		t.Fatalf("%s = %d %s, want %d", r, got.status, got.body, status)
	}
	var out map[string]any
	if got.body != "" {
		if err := json.Unmarshal([]byte(got.body), &out); err != nil {
			t.Fatalf("%s: body %q is not a JSON object: %v", r, got.body, err)
		}
	}
	return out
}

// wantError does a request and fails unless it answers the error kind with
// a message containing msg.
func (f *fixture) wantError(t *testing.T, kind smshttp.Kind, r req, msg string) {
	t.Helper()
	got := f.do(r)
	var e struct {
		Error struct{ Message, Kind string }
	}
	_ = json.Unmarshal([]byte(got.body), &e)
	if got.status != kind.Status() || e.Error.Kind != string(kind) || !strings.Contains(e.Error.Message, msg) {
		t.Fatalf("%s = %d %s, want %d %s with a message containing %q", r, got.status, got.body, kind.Status(), kind, msg)
	}
}

// records lists a collection over REST and returns the records.
func (f *fixture) records(t *testing.T, query string) []map[string]any {
	t.Helper()
	got := f.do(req{"GET", "/api/collections/" + query, ""})
	if got.status != 200 {
		t.Fatalf("GET %s = %d %s, want 200", query, got.status, got.body)
	}
	var out struct{ Records []map[string]any }
	if err := json.Unmarshal([]byte(got.body), &out); err != nil {
		t.Fatalf("list body %q: %v", got.body, err)
	}
	return out.Records
}

// invoice is the collection most tests use.
func invoice() collections.Collection {
	return collections.Collection{Name: "invoice", Fields: []collections.Field{
		{Name: "customer", Type: collections.TypeText, Required: true},
		{Name: "amount", Type: collections.TypeReal, Required: true},
		{Name: "paid", Type: collections.TypeBoolean, Default: false},
		{Name: "lines", Type: collections.TypeInteger},
		{Name: "meta", Type: collections.TypeJSON},
	}}
}

func invoiceApp() kernel.Plugin {
	return app("app.invoices", map[string][]any{collections.CollectionPoint: {invoice()}})
}

// columns returns the columns of a table, read from the database itself.
func columns(t *testing.T, db contracts.Database, table string) []string {
	t.Helper()
	cols, err := db.Columns(context.Background(), table)
	if err != nil {
		t.Fatalf("columns of %s: %v", table, err)
	}
	return cols
}

// jsonOf encodes v for comparisons in failure messages.
func jsonOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
