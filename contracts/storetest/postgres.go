package storetest

import (
	"os"
	"testing"
)

// Environment variables the Postgres tests read.
const (
	// EnvPostgresURL names a server the tests may create schemas on, for
	// example the one `eval "$(hack/postgres.sh start)"` starts.
	EnvPostgresURL = "SMS_TEST_POSTGRES_URL"
	// EnvRequirePostgres, when set, turns a missing EnvPostgresURL into a
	// failure instead of a skip (make test and CI set it).
	EnvRequirePostgres = "SMS_REQUIRE_POSTGRES"
)

// PostgresURL returns the server URL from EnvPostgresURL. Without it the
// test is skipped, or fails when EnvRequirePostgres is set, so a missing
// server can never pass silently where one is expected.
func PostgresURL(t testing.TB) string {
	t.Helper()
	if url := os.Getenv(EnvPostgresURL); url != "" {
		return url
	}
	if os.Getenv(EnvRequirePostgres) != "" {
		t.Fatalf("%s is set but %s is empty: start a server with `eval \"$(hack/postgres.sh start)\"`",
			EnvRequirePostgres, EnvPostgresURL)
	}
	t.Skipf("%s is not set: start a server with `eval \"$(hack/postgres.sh start)\"` to run the Postgres tests "+
		"(set %s to make its absence a failure)", EnvPostgresURL, EnvRequirePostgres)
	return ""
}
