package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// testAtomic checks contracts.Atomic on the driver: an Ambient view of the
// database joins the transaction through the context, an error rolls back
// everything it did, a nested Atomic is a savepoint, and AfterCommit runs
// only after a commit. Seen failing with Ambient ignoring the context
// (the join test deadlocks on SQLite's one connection and sees the row
// committed after the rollback on Postgres) and with the savepoint left
// out (the inner error undid the outer work).
func testAtomic(t *testing.T, db contracts.Database) {
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE a (v INTEGER)`)
	amb := contracts.Ambient(db)
	if contracts.Ambient(amb) != amb {
		t.Fatal("Ambient of an Ambient database is not that database")
	}
	count := func() int64 {
		t.Helper()
		return mustQuery(t, db, `SELECT COUNT(*) AS n FROM a`)[0]["n"].(int64)
	}
	insert := func(ctx context.Context, v int) error {
		_, err := amb.Query(ctx, `INSERT INTO a (v) VALUES (?)`, v)
		return err
	}
	boom := errors.New("boom")

	var ran []string
	err := contracts.Atomic(ctx, db, func(ctx context.Context) error {
		if !contracts.InAtomic(ctx) {
			t.Error("InAtomic is false inside Atomic")
		}
		contracts.AfterCommit(ctx, func() { ran = append(ran, "rolled back") })
		return errors.Join(insert(ctx, 1), boom)
	})
	if !errors.Is(err, boom) || count() != 0 || len(ran) != 0 {
		t.Fatalf("a failed Atomic: err %v, %d rows, after-commit ran %v; want boom, 0 rows, nothing ran", err, count(), ran)
	}

	err = contracts.Atomic(ctx, db, func(ctx context.Context) error {
		contracts.AfterCommit(ctx, func() { ran = append(ran, "outer") })
		if err := insert(ctx, 1); err != nil {
			return err
		}
		// A nested Atomic is a savepoint: its failure undoes only itself.
		inner := contracts.Atomic(ctx, amb, func(ctx context.Context) error {
			contracts.AfterCommit(ctx, func() { ran = append(ran, "undone savepoint") })
			return errors.Join(insert(ctx, 2), boom)
		})
		if !errors.Is(inner, boom) {
			return errors.Join(errors.New("the inner Atomic did not fail"), inner)
		}
		// Tx on the Ambient database is a savepoint that commits with it.
		if err := amb.Tx(ctx, func(tx contracts.Querier) error {
			_, err := tx.Query(ctx, `INSERT INTO a (v) VALUES (?)`, 3)
			return err
		}); err != nil {
			return err
		}
		// Statements from several goroutines share the transaction.
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[i] = amb.Query(ctx, `SELECT COUNT(*) AS n FROM a`) }()
		}
		wg.Wait()
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := mustQuery(t, db, `SELECT v FROM a ORDER BY v`)
	if got := int64s(rows, "v"); !equal(got, []int64{1, 3}) || len(ran) != 1 || ran[0] != "outer" {
		t.Fatalf("after the commit: rows %v, after-commit ran %v; want [1 3] and [outer]", got, ran)
	}

	// Outside Atomic the Ambient database is the database, and AfterCommit
	// runs at once.
	if err := insert(ctx, 4); err != nil || count() != 3 {
		t.Fatalf("outside Atomic: %v, %d rows", err, count())
	}
	now := false
	contracts.AfterCommit(ctx, func() { now = true })
	if !now {
		t.Fatal("AfterCommit outside Atomic did not run at once")
	}
}

// testAtomicConcurrentSavepoints: savepoints started at once from one
// transaction take turns, so one's rollback never undoes the other's
// statements or drops its after-commit functions. Seen failing with
// savepoints not serialised (the rollback of b took a's second row, or
// failed with "no such savepoint").
func testAtomicConcurrentSavepoints(t *testing.T, db contracts.Database) {
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE c (v INTEGER)`)
	amb := contracts.Ambient(db)
	boom := errors.New("boom")
	var mu sync.Mutex
	var ran []string
	for round := range 100 {
		err := contracts.Atomic(ctx, db, func(ctx context.Context) error {
			var wg sync.WaitGroup
			for _, name := range []string{"a", "b"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_ = amb.Tx(ctx, func(tx contracts.Querier) error {
						for i := range 3 {
							if _, err := tx.Query(ctx, `INSERT INTO c (v) VALUES (?)`, round*10+i); err != nil {
								return err
							}
						}
						if name == "b" {
							return boom
						}
						return nil
					})
					if name == "a" {
						contracts.AfterCommit(ctx, func() { mu.Lock(); ran = append(ran, "a"); mu.Unlock() })
					}
				}()
			}
			wg.Wait()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := mustQuery(t, db, `SELECT COUNT(*) AS n FROM c`)[0]["n"]; n != int64(300) || len(ran) != 100 {
		t.Fatalf("%v rows and %d after-commit runs; want a's 3 rows and its function in each of 100 rounds", n, len(ran))
	}
}
