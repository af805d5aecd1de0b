package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// Everything fn did, DDL included, is visible after a commit. Seen failing
// with Tx rolling back instead of committing.
func testTxCommit(t *testing.T, db contracts.Database) {
	mustExec(t, db, `CREATE TABLE t (v INTEGER)`)
	err := db.Tx(context.Background(), func(tx contracts.Querier) error {
		if err := tx.Exec(context.Background(), `CREATE TABLE t2 (w INTEGER)`); err != nil {
			return err
		}
		for _, v := range []int{1, 2} {
			if _, err := tx.Query(context.Background(), `INSERT INTO t (v) VALUES (?)`, v); err != nil {
				return err
			}
		}
		rows, err := tx.Query(context.Background(), `SELECT COUNT(*) AS n FROM t`)
		if err != nil {
			return err
		}
		if rows[0]["n"] != int64(2) {
			return fmt.Errorf("inside the transaction: count = %v, want 2", rows[0]["n"])
		}
		cols, err := tx.Columns(context.Background(), "t2")
		if err != nil {
			return err
		}
		if !equal(cols, []string{"w"}) {
			return fmt.Errorf("inside the transaction: Columns(t2) = %v, want [w]", cols)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Tx: %v", err)
	}
	if rows := mustQuery(t, db, `SELECT v FROM t ORDER BY v`); !equal(int64s(rows, "v"), []int64{1, 2}) {
		t.Fatalf("after commit: v = %v, want [1 2]", int64s(rows, "v"))
	}
	wantColumns(t, db, "t2", "w")
}

// fn's error rolls back everything, DDL included, and comes back unchanged
// in the chain; a failed statement inside fn rolls back the earlier ones.
// Seen failing with the deferred rollback replaced by a commit.
func testTxRollback(t *testing.T, db contracts.Database) {
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE t (v INTEGER PRIMARY KEY)`)
	mustQuery(t, db, `INSERT INTO t (v) VALUES (?)`, 1)
	errBoom := errors.New("boom")
	err := db.Tx(ctx, func(tx contracts.Querier) error {
		if err := tx.Exec(ctx, `CREATE TABLE t2 (w INTEGER)`); err != nil {
			return err
		}
		if _, err := tx.Query(ctx, `INSERT INTO t (v) VALUES (?)`, 2); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Tx error = %v, want the callback's error", err)
	}
	err = db.Tx(ctx, func(tx contracts.Querier) error {
		if _, err := tx.Query(ctx, `INSERT INTO t (v) VALUES (?)`, 3); err != nil {
			return err
		}
		_, err := tx.Query(ctx, `INSERT INTO t (v) VALUES (?)`, 1)
		return err
	})
	if !errors.Is(err, contracts.ErrUnique) {
		t.Fatalf("Tx error = %v, want the statement's ErrUnique", err)
	}
	if rows := mustQuery(t, db, `SELECT v FROM t`); !equal(int64s(rows, "v"), []int64{1}) {
		t.Fatalf("after rollbacks: v = %v, want [1]", int64s(rows, "v"))
	}
	wantColumns(t, db, "t2")
}

// A panic in fn rolls back, then continues. Seen failing with the deferred
// rollback replaced by a commit.
func testTxPanic(t *testing.T, db contracts.Database) {
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE t (v INTEGER)`)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the callback's panic", r)
			}
		}()
		_ = db.Tx(ctx, func(tx contracts.Querier) error {
			if _, err := tx.Query(ctx, `INSERT INTO t (v) VALUES (?)`, 1); err != nil {
				t.Error(err)
			}
			panic("boom")
		})
	}()
	if rows := mustQuery(t, db, `SELECT v FROM t`); len(rows) != 0 {
		t.Fatalf("after a panic: rows = %v, want none", rows)
	}
	mustQuery(t, db, `INSERT INTO t (v) VALUES (?)`, 2) // the database is still usable
}

// Statements and transactions from many goroutines all land exactly once.
// Seen failing ("no such table") with SQLite's :memory: database allowed
// four connections.
func testConcurrent(t *testing.T, db contracts.Database) {
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE t (g INTEGER, i INTEGER)`)
	const workers, each = 6, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				var err error
				if i%2 == 0 {
					_, err = db.Query(ctx, `INSERT INTO t (g, i) VALUES (?, ?)`, g, i)
				} else {
					err = db.Tx(ctx, func(tx contracts.Querier) error {
						_, err := tx.Query(ctx, `INSERT INTO t (g, i) VALUES (?, ?)`, g, i)
						return err
					})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rows := mustQuery(t, db, `SELECT COUNT(*) AS n, COUNT(DISTINCT g * 100 + i) AS d FROM t`)
	if rows[0]["n"] != int64(workers*each) || rows[0]["d"] != int64(workers*each) {
		t.Fatalf("rows = %v distinct %v, want %d of each", rows[0]["n"], rows[0]["d"], workers*each)
	}
}
