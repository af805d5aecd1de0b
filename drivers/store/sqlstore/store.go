package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// Table names the store owns.
const (
	EventsTable = "kernel_events"
	BlobsTable  = "kernel_blobs"
)

var (
	eventColumns = []string{"seq", "type", "plugin", "time", "data"}
	blobColumns  = []string{"hash", "data"}
)

// Store is a contracts.Store on one Database. It is safe for concurrent use.
type Store struct {
	db    contracts.Database
	log   *eventLog
	blobs *blobStore

	closeOnce sync.Once
	closeErr  error
}

var _ contracts.Store = (*Store)(nil)

// New creates the kernel tables in db if they are missing and returns a
// store that owns db: closing the store closes db. When New fails, db is
// left open for the caller to close.
func New(ctx context.Context, db contracts.Database) (*Store, error) {
	types, err := db.Dialect().Types()
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := createTables(ctx, db, types); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &Store{db: db, log: &eventLog{db: db}, blobs: &blobStore{db: db}}, nil
}

func createTables(ctx context.Context, db contracts.Database, t contracts.ColumnTypes) error {
	ddl := `CREATE TABLE IF NOT EXISTS ` + EventsTable + ` (
	"seq" ` + t.BigInt + ` PRIMARY KEY,
	"type" ` + t.Text + ` NOT NULL,
	"plugin" ` + t.Text + ` NOT NULL DEFAULT '',
	"time" ` + t.Text + ` NOT NULL,
	"data" ` + t.Text + `
);
CREATE INDEX IF NOT EXISTS ` + EventsTable + `_plugin ON ` + EventsTable + ` ("plugin", "seq");
CREATE TABLE IF NOT EXISTS ` + BlobsTable + ` (
	"hash" ` + t.Text + ` PRIMARY KEY,
	"data" ` + t.Blob + ` NOT NULL
);`
	err := db.Exec(ctx, ddl)
	if errors.Is(err, contracts.ErrUnique) {
		// Another process created the tables at the same moment (Postgres
		// reports the race on its catalogue); now they exist.
		err = db.Exec(ctx, ddl)
	}
	if err != nil {
		return fmt.Errorf("create kernel tables: %w", err)
	}
	for table, want := range map[string][]string{EventsTable: eventColumns, BlobsTable: blobColumns} {
		got, err := db.Columns(ctx, table)
		if err != nil {
			return fmt.Errorf("check %s: %w", table, err)
		}
		for _, c := range want {
			if !slices.Contains(got, c) {
				return fmt.Errorf("table %s has columns %v, want at least %v: it was not created by this package",
					table, got, want)
			}
		}
	}
	return nil
}

// Database implements contracts.Store.
func (s *Store) Database() contracts.Database { return s.db }

// Log implements contracts.Store.
func (s *Store) Log() kernel.EventLog { return s.log }

// Blobs implements contracts.Store.
func (s *Store) Blobs() kernel.BlobStore { return s.blobs }

// Close implements contracts.Store: it closes the database once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("close store: %w", err)
		}
	})
	return s.closeErr
}
