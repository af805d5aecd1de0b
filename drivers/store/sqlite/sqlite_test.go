package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/storetest"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
)

func TestMain(m *testing.M) {
	storetest.CrashChild(func(ctx context.Context, path string) (contracts.Store, error) {
		return sqlite.OpenStore(ctx, path)
	})
	os.Exit(m.Run())
}

func openDB(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func location(path string) storetest.Location {
	return func(t *testing.T) contracts.Store {
		t.Helper()
		st, err := sqlite.OpenStore(context.Background(), path)
		if err != nil {
			t.Fatalf("open store %s: %v", path, err)
		}
		return st
	}
}

func TestDatabase(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		storetest.RunDatabase(t, func(t *testing.T) contracts.Database { return openDB(t, sqlite.Memory) })
	})
	t.Run("file", func(t *testing.T) {
		storetest.RunDatabase(t, func(t *testing.T) contracts.Database {
			return openDB(t, filepath.Join(t.TempDir(), "test.db"))
		})
	})
}

func TestStore(t *testing.T) {
	storetest.RunStore(t, func(t *testing.T) storetest.Location {
		return location(filepath.Join(t.TempDir(), "kernel.db"))
	})
}

// Every append that returned survives a SIGKILL of the appending process.
// Seen failing with Append reporting its number before the insert ran (the
// insert moved to a goroutine).
func TestCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kernel.db")
	storetest.RunCrash(t, path, location(path))
}

// A file runs in WAL mode with full sync, on every connection. Seen failing
// with the journal_mode and synchronous pragmas removed from params.
func TestFileIsWALWithFullSync(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "wal.db"))
	cases := []struct {
		pragma, col string
		want        any
	}{
		{"PRAGMA journal_mode", "journal_mode", "wal"},
		{"PRAGMA synchronous", "synchronous", int64(2)}, // FULL
		{"PRAGMA foreign_keys", "foreign_keys", int64(1)},
	}
	for _, tc := range cases {
		rows, err := db.Query(context.Background(), tc.pragma)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0][tc.col] != tc.want {
			t.Errorf("%s = %v, want %v", tc.pragma, rows, tc.want)
		}
	}
}

// Bad paths are refused with a message, before anything is created.
func TestOpenRejectsBadPaths(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"empty":          "",
		"query string":   filepath.Join(dir, "a.db?mode=ro"),
		"fragment":       filepath.Join(dir, "a.db#x"),
		"missing folder": filepath.Join(dir, "missing", "a.db"),
	}
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			db, err := sqlite.Open(context.Background(), path)
			if err == nil {
				_ = db.Close()
				t.Fatalf("Open(%q) = nil error, want one", path)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Fatalf("the folder holds %v (%v), want nothing created", entries, err)
	}
}

// A cancelled context fails Open without touching the file.
func TestOpenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "a.db"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with a cancelled context: error = %v, want context.Canceled", err)
	}
}
