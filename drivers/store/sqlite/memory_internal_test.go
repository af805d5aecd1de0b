package sqlite

import (
	"context"
	"runtime"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// ":memory:" is one database however many goroutines use it: a query that
// arrives while a transaction holds the connection waits for it instead of
// opening a second, empty database. Seen failing ("no such table") with
// SetMaxOpenConns(2).
func TestMemoryIsOneDatabase(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Exec(ctx, `CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	err = d.Tx(ctx, func(tx contracts.Querier) error {
		go func() {
			_, err := d.Query(ctx, `SELECT v FROM t`)
			done <- err
		}()
		// Return once the query waits for the connection, or has finished
		// on another one.
		for d.db.Stats().WaitCount == 0 && len(done) == 0 {
			runtime.Gosched()
		}
		_, err := tx.Query(ctx, `INSERT INTO t (v) VALUES (?)`, 1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("query from another goroutine during a transaction: %v, want it to wait and succeed", err)
	}
}
