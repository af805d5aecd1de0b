package orm_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/orm/ormtest"
)

// cancelling is a Database whose transactions end a context once they
// have run a number of statements, as a host call's deadline passing in
// the middle of a write would.
type cancelling struct {
	contracts.Database
	mu     sync.Mutex
	after  int // statements in a transaction before cancel; 0 for never
	cancel context.CancelFunc
}

func (c *cancelling) arm(after int, cancel context.CancelFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.after, c.cancel = after, cancel
}

func (c *cancelling) Tx(ctx context.Context, fn func(tx contracts.Querier) error) error {
	return c.Database.Tx(ctx, func(tx contracts.Querier) error { return fn(&cancellingTx{Querier: tx, c: c}) })
}

type cancellingTx struct {
	contracts.Querier
	c *cancelling
}

func (t *cancellingTx) Query(ctx context.Context, sql string, args ...any) ([]contracts.Row, error) {
	rows, err := t.Querier.Query(ctx, sql, args...)
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.c.after > 0 {
		if t.c.after--; t.c.after == 0 {
			t.c.cancel()
		}
	}
	return rows, err
}

// An operation whose context ends while its transaction runs stops at
// its next statement or record, rolls back whole and says why. Seen
// failing with the writer's statements run on context.WithoutCancel(ctx):
// the operations ended with database/sql's "transaction has already been
// committed or rolled back" instead of the context's end.
func TestContextEndStopsAndRollsBack(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			db := &cancelling{Database: d.open(t)}
			e := suite(d.open).Boot(t, db, orm.Options{})
			e.Seed(t)
			lines := repeat(10, map[string]any{"op": "create", "values": map[string]any{"product": "x"}})
			for _, c := range []struct {
				name string
				run  func(ctx context.Context) error
			}{
				{"write", func(ctx context.Context) error {
					return e.ORM.Write(ctx, "invoice", []int64{1, 3, 4}, map[string]any{"total": 7, "lines": lines})
				}},
				{"create", func(ctx context.Context) error {
					_, err := e.ORM.Create(ctx, "invoice", map[string]any{"number": "N", "lines": lines})
					return err
				}},
				{"unlink", func(ctx context.Context) error { return e.ORM.Unlink(ctx, "invoice", []int64{1, 2, 3}) }},
			} {
				t.Run(c.name, func(t *testing.T) {
					ctx, cancel := context.WithCancel(ormtest.Sudo())
					defer cancel()
					db.arm(3, cancel)
					err := c.run(ctx)
					db.arm(0, nil)
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("%s whose context ended mid-transaction: %v, want context.Canceled", c.name, err)
					}
					n, err := e.ORM.Count(ormtest.Sudo(), "invoice_line", nil)
					if err != nil || n != 4 {
						t.Fatalf("lines after the stopped %s = %d, %v; want 4", c.name, n, err)
					}
					ids, err := e.ORM.Search(ormtest.Sudo(), "invoice", orm.Domain{[]any{"total", "=", 7}}, orm.SearchOptions{})
					if err != nil || len(ids) != 0 {
						t.Fatalf("invoices of total 7 after the stopped %s = %v, %v; want none", c.name, ids, err)
					}
					if all, _ := e.ORM.Count(ormtest.Sudo(), "invoice", nil); all != 5 {
						t.Fatalf("invoices after the stopped %s = %d, want 5", c.name, all)
					}
				})
			}
		})
	}
}
