// Package stores runs a test on each store driver: SQLite in memory, and
// Postgres in a schema of its own, dropped when the test ends.
package stores

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/storetest"
	"github.com/sms-baseline/sms/drivers/store/postgres"
)

// Each runs fn as the subtests sqlite and postgres. open returns the store
// to boot on: nil on SQLite (a kernel's private in-memory database), a
// new Postgres store on a schema named prefix plus random letters. The
// Postgres subtest skips, or fails under SMS_REQUIRE_POSTGRES, without a
// server (storetest.PostgresURL).
func Each(t *testing.T, prefix string, fn func(t *testing.T, open func() contracts.Store)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, func() contracts.Store { return nil }) })
	t.Run("postgres", func(t *testing.T) {
		url := storetest.PostgresURL(t)
		schema := prefix + strings.ToLower(rand.Text())
		t.Cleanup(func() { // after the kernel closes its store
			db, err := postgres.Open(context.Background(), postgres.Options{URL: url, Schema: schema})
			if err != nil {
				t.Errorf("drop schema %s: %v", schema, err)
				return
			}
			defer func() { _ = db.Close() }()
			if err := db.Exec(context.Background(), `DROP SCHEMA "`+schema+`" CASCADE`); err != nil {
				t.Errorf("drop schema %s: %v", schema, err)
			}
		})
		fn(t, func() contracts.Store {
			st, err := postgres.OpenStore(context.Background(), postgres.Options{URL: url, Schema: schema})
			if err != nil {
				t.Fatalf("open postgres: %v", err)
			}
			return st
		})
	})
}
