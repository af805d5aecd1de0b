package postgres_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/storetest"
	"github.com/sms-baseline/sms/drivers/store/postgres"
)

func TestMain(m *testing.M) {
	storetest.CrashChild(func(ctx context.Context, schema string) (contracts.Store, error) {
		return postgres.OpenStore(ctx, postgres.Options{URL: os.Getenv(storetest.EnvPostgresURL), Schema: schema})
	})
	os.Exit(m.Run())
}

// freshSchema returns the server URL and a new random schema name, and drops
// the schema when the test ends, so tests run in parallel and re-run.
func freshSchema(tb testing.TB) (string, string) {
	tb.Helper()
	url := storetest.PostgresURL(tb)
	schema := "storetest_" + strings.ToLower(rand.Text())
	tb.Cleanup(func() {
		db, err := postgres.Open(context.Background(), postgres.Options{URL: url, Schema: schema, MaxConns: 1})
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer func() { _ = db.Close() }()
		if err := db.Exec(context.Background(), `DROP SCHEMA "`+schema+`" CASCADE`); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return url, schema
}

func openDB(tb testing.TB, opts postgres.Options) *postgres.DB {
	tb.Helper()
	db, err := postgres.Open(context.Background(), opts)
	if err != nil {
		tb.Fatalf("open schema %s: %v", opts.Schema, err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func location(url, schema string) storetest.Location {
	return func(t *testing.T) contracts.Store {
		t.Helper()
		st, err := postgres.OpenStore(context.Background(), postgres.Options{URL: url, Schema: schema})
		if err != nil {
			t.Fatalf("open store in %s: %v", schema, err)
		}
		return st
	}
}

func TestDatabase(t *testing.T) {
	t.Parallel()
	storetest.PostgresURL(t) // skip or fail once, not per case
	storetest.RunDatabase(t, func(t *testing.T) contracts.Database {
		url, schema := freshSchema(t)
		return openDB(t, postgres.Options{URL: url, Schema: schema})
	})
}

// Seen failing (ConcurrentAppend: "unique constraint violated") with
// sqlstore's retry on ErrUnique removed.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.PostgresURL(t) // skip or fail once, not per case
	storetest.RunStore(t, func(t *testing.T) storetest.Location {
		return location(freshSchema(t))
	})
}

// Every append that returned survives a SIGKILL of the appending process.
// Seen failing with Append reporting its number before the insert ran.
func TestCrash(t *testing.T) {
	t.Parallel()
	url, schema := freshSchema(t)
	storetest.RunCrash(t, schema, location(url, schema))
}

// Bad schema names are refused before any connection is made: the URL
// points at a closed port, and the error is still about the name.
func TestOpenRejectsBadSchemas(t *testing.T) {
	t.Parallel()
	const nowhere = "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"
	for _, schema := range []string{"Tenant", "tenant-a", "a;drop schema public", "a.b", `a"b`, "pg_catalog",
		"pg_temp", "information_schema", "t123456789012345678901234567890123456789012"} {
		t.Run(schema, func(t *testing.T) {
			db, err := postgres.Open(context.Background(), postgres.Options{URL: nowhere, Schema: schema})
			if err == nil {
				_ = db.Close()
				t.Fatalf("Open(schema %q) = nil error, want ErrInvalidIdent", schema)
			}
			if !errors.Is(err, contracts.ErrInvalidIdent) {
				t.Fatalf("Open(schema %q) error = %v, want ErrInvalidIdent", schema, err)
			}
		})
	}
	if _, err := postgres.Open(context.Background(), postgres.Options{URL: "::not a url::", Schema: "ok"}); err == nil {
		t.Fatal("Open with a malformed URL = nil error, want one")
	}
}
