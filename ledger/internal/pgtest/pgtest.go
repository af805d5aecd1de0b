package pgtest

import (
	"context"
	"crypto/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sms-baseline/sms/ledger/pgstore"
)

// Environment variables AdminURL reads.
const (
	// EnvURL names an administrative connection URL for a server tests may
	// create and drop databases on.
	EnvURL = "SMS_TEST_POSTGRES_URL"
	// EnvRequire, when set, turns a missing EnvURL into a test failure.
	EnvRequire = "SMS_REQUIRE_POSTGRES"
)

// AppRole is the unprivileged login role for row-level security tests.
const AppRole = "sms_ledger_app"

const appPassword = "sms_ledger_app"

// AdminURL returns the server URL from EnvURL. Without it the test skips, or
// fails when EnvRequire is set.
func AdminURL(t testing.TB) string {
	t.Helper()
	if url := os.Getenv(EnvURL); url != "" {
		return url
	}
	if os.Getenv(EnvRequire) != "" {
		t.Fatalf("%s is set but %s is empty: start a server with `eval \"$(hack/postgres.sh start)\"`", EnvRequire, EnvURL)
		return ""
	}
	t.Skipf("%s is not set; set it to run Postgres tests, and set %s to make its absence a failure", EnvURL, EnvRequire)
	return ""
}

// Database is a fresh database with the ledger schema installed.
type Database struct {
	// Name is the database's random name.
	Name  string
	admin string
}

// NewDatabase creates and migrates a database with a random name, grants the
// unprivileged role access to the ledger tables, and drops the database when
// the test ends.
func NewDatabase(t testing.TB) *Database {
	t.Helper()
	admin := AdminURL(t)
	d := &Database{Name: "ledger_test_" + strings.ToLower(rand.Text()), admin: admin}
	execAdmin(t, admin, "", `create database `+pgx.Identifier{d.Name}.Sanitize())
	t.Cleanup(func() {
		execAdmin(t, admin, "", `drop database if exists `+pgx.Identifier{d.Name}.Sanitize()+` with (force)`)
	})
	ensureAppRole(t, admin)
	pool := d.Pool(t, 2)
	if err := pgstore.Migrate(context.Background(), pool); err != nil {
		t.Fatalf("migrate %s: %v", d.Name, err)
	}
	execAdmin(t, admin, d.Name, `grant usage on schema ledger to `+AppRole+`;
		grant select, insert, update on ledger.runs, ledger.steps to `+AppRole)
	pool.Close()
	return d
}

// Pool opens a pool on the database as the administrative user. That user
// is a superuser and bypasses row-level security. The pool closes when the
// test ends.
func (d *Database) Pool(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	return d.open(t, "", maxConns)
}

// AppPool opens a pool on the database as AppRole, which row-level security
// binds. The pool closes when the test ends.
func (d *Database) AppPool(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	return d.open(t, AppRole, maxConns)
}

func (d *Database) open(t testing.TB, user string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(d.admin)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvURL, err)
	}
	cfg.ConnConfig.Database = d.Name
	if user != "" {
		cfg.ConnConfig.User, cfg.ConnConfig.Password = user, appPassword
	}
	cfg.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open pool on %s: %v", d.Name, err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// ensureAppRole creates AppRole once per server. The advisory lock keeps
// concurrent test processes from racing on the role catalogue.
func ensureAppRole(t testing.TB, admin string) {
	t.Helper()
	execAdmin(t, admin, "", `do $$
	begin
		perform pg_advisory_xact_lock(hashtext('`+AppRole+`'));
		if not exists (select 1 from pg_roles where rolname = '`+AppRole+`') then
			create role `+AppRole+` login nosuperuser nobypassrls nocreatedb nocreaterole
				password '`+appPassword+`';
		end if;
	end
	$$`)
}

// execAdmin runs sql as the administrative user on database db (the
// server's default database when empty).
func execAdmin(t testing.TB, admin, db, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvURL, err)
	}
	if db != "" {
		cfg.Database = db
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect to %s: %v", cfg.Database, err)
	}
	defer func() {
		if err := conn.Close(ctx); err != nil {
			t.Errorf("close connection to %s: %v", cfg.Database, err)
		}
	}()
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("exec %q: %v", sql, err)
	}
}
