package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/storetest"
	"github.com/sms-baseline/sms/drivers/store/postgres"
	"github.com/sms-baseline/sms/kernel"
)

// Two tenants on one server see only their own tables and events. Seen
// failing with search_path neither sent at startup nor checked (both
// tenants then share public).
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, a := freshSchema(t)
	_, b := freshSchema(t)
	stA, stB := location(url, a)(t), location(url, b)(t)
	t.Cleanup(func() { _ = stA.Close(); _ = stB.Close() })

	if err := stA.Database().Exec(ctx, `CREATE TABLE c_secret (v TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := stA.Database().Query(ctx, `INSERT INTO c_secret (v) VALUES (?)`, "a's"); err != nil {
		t.Fatal(err)
	}
	if _, err := stA.Log().Append(ctx, kernel.Event{Type: "x", Plugin: "agent.a"}); err != nil {
		t.Fatal(err)
	}
	if cols, err := stB.Database().Columns(ctx, "c_secret"); err != nil || len(cols) != 0 {
		t.Fatalf("tenant b: Columns(c_secret) = %v, %v; want none", cols, err)
	}
	if rows, err := stB.Database().Query(ctx, `SELECT v FROM c_secret`); err == nil {
		t.Fatalf("tenant b read tenant a's table: %v; want an error (no such relation)", rows)
	}
	if events, err := stB.Log().Read(ctx, 0, 0); err != nil || len(events) != 0 {
		t.Fatalf("tenant b: Read = %v, %v; want no events", events, err)
	}
	if seq, err := stB.Log().Append(ctx, kernel.Event{Type: "x"}); err != nil || seq != 1 {
		t.Fatalf("tenant b: first Append = %d, %v; want 1", seq, err)
	}
}

// Every pooled connection is pinned to the schema, not just the first: four
// transactions held open at once run on four connections, and each sees
// only the tenant's schema. Seen failing with the pin replaced by one
// SET search_path run in Open.
func TestSearchPathPinnedOnEveryConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, schema := freshSchema(t)
	const conns = 4
	db := openDB(t, postgres.Options{URL: url, Schema: schema, MaxConns: conns})
	var started, wg sync.WaitGroup
	started.Add(conns)
	results := make(chan contracts.Row, conns)
	for range conns {
		wg.Go(func() {
			err := db.Tx(ctx, func(tx contracts.Querier) error {
				started.Done()
				started.Wait() // all four hold a connection now
				rows, err := tx.Query(ctx, `SELECT current_schemas(false)::text AS path, pg_backend_pid() AS pid`)
				if err == nil {
					results <- rows[0]
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	close(results)
	pids := map[any]bool{}
	for r := range results {
		pids[r["pid"]] = true
		if want := "{" + schema + "}"; r["path"] != want {
			t.Errorf("connection %v searches %v, want %s", r["pid"], r["path"], want)
		}
	}
	if len(pids) != conns {
		t.Fatalf("ran on %d connections, want %d", len(pids), conns)
	}
}

// A SELECT * prepared before a column was added still works after it, on the
// same pooled connection. Seen failing ("cached plan must not change result
// type") with the retry in Query removed.
func TestColumnAddedUnderCachedStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, schema := freshSchema(t)
	db := openDB(t, postgres.Options{URL: url, Schema: schema, MaxConns: 1})
	if err := db.Exec(ctx, `CREATE TABLE c_items (id BIGINT); INSERT INTO c_items VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Query(ctx, `SELECT * FROM c_items`); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(ctx, `ALTER TABLE c_items ADD COLUMN name TEXT`); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(ctx, `SELECT * FROM c_items`)
	if err != nil {
		t.Fatalf("SELECT * after ADD COLUMN: %v", err)
	}
	if _, ok := rows[0]["name"]; len(rows) != 1 || !ok {
		t.Fatalf("rows = %v, want one row with the new column", rows)
	}
}

// An empty schema means public, which is never created or dropped here.
func TestDefaultSchema(t *testing.T) {
	t.Parallel()
	db := openDB(t, postgres.Options{URL: storetest.PostgresURL(t)})
	if got := db.Schema(); got != postgres.DefaultSchema {
		t.Fatalf("Schema() = %q, want %q", got, postgres.DefaultSchema)
	}
}

// A connection string that asks for another search_path cannot move the
// tenant: the driver's pin wins over the URL's parameters. Seen failing with
// the pin set only when the URL names no search_path (Open refused), and
// with the pin and the AfterConnect check both removed (queries ran in
// public).
func TestURLCannotOverrideSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, schema := freshSchema(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	for _, extra := range []string{"search_path=public", "options=-c%20search_path%3Dpublic"} {
		t.Run(extra, func(t *testing.T) {
			db := openDB(t, postgres.Options{URL: url + sep + extra, Schema: schema})
			rows, err := db.Query(ctx, `SELECT current_schemas(false)::text AS path`)
			if err != nil {
				t.Fatal(err)
			}
			if want := "{" + schema + "}"; rows[0]["path"] != want {
				t.Fatalf("with %s the connection searches %v, want %s", extra, rows[0]["path"], want)
			}
		})
	}
}
