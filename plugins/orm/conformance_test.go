package orm_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/storetest"
	"github.com/sms-baseline/sms/drivers/store/postgres"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm/ormtest"
)

func openSQLite(t testing.TB) contracts.Database {
	t.Helper()
	db, err := sqlite.Open(context.Background(), sqlite.Memory)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// openPostgres opens a fresh schema and drops it when the test ends.
func openPostgres(t testing.TB) contracts.Database {
	t.Helper()
	url := storetest.PostgresURL(t)
	schema := "orm_" + strings.ToLower(rand.Text())
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

// TestConformanceSQLite and TestConformancePostgres run one suite on both
// drivers, so every domain answers the same on each.
func TestConformanceSQLite(t *testing.T)   { ormtest.Run(t, suite(openSQLite)) }
func TestConformancePostgres(t *testing.T) { ormtest.Run(t, suite(openPostgres)) }

func suite(open ormtest.Open) ormtest.Suite {
	return ormtest.Suite{Open: open, Base: []kernel.Plugin{smshttp.Plugin(smshttp.Options{})}}
}
