package orm_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/orm/ormtest"
)

// nodes is a system plugin declaring node, whose records link to each
// other, and whose computed field slow waits at its gate (when one is set)
// while a read holds what it loaded.
type nodes struct {
	once    sync.Once
	entered chan struct{} // closed when slow is first computed
	release chan struct{} // slow answers once it is closed
}

func newNodes() *nodes {
	return &nodes{entered: make(chan struct{}), release: make(chan struct{})}
}

func (n *nodes) plugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: "app.nodes", Version: "1", Inject: []string{orm.Key}, Points: []string{orm.MethodPoint},
			Contributes: map[string][]any{orm.ModelPoint: {orm.Model{Name: "node", Fields: map[string]orm.Field{
				"name":  {Kind: orm.KindChar},
				"links": {Kind: orm.KindMany2Many, Target: "node"},
				"slow":  {Kind: orm.KindComputed, Returns: orm.KindInt, Compute: "wait"},
			}}}}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			_, err := c.Contribute(orm.MethodPoint, orm.Method{Model: "node", Name: "wait",
				Handler: func(_ context.Context, call orm.MethodCall) (any, error) {
					n.once.Do(func() { close(n.entered) })
					<-n.release
					return map[int64]any{}, nil
				}})
			return err
		},
	}
}

// seedNodes creates count nodes with names of size bytes, every one
// linked to every other, and returns their ids.
func seedNodes(t *testing.T, e *agentEnv, count, size int) []int64 {
	t.Helper()
	ids := make([]int64, count)
	for i := range ids {
		ids[i] = e.Create(t, "node", "", map[string]any{"name": strings.Repeat("n", size)})
	}
	for _, id := range ids {
		if err := e.ORM.Write(ormtest.Sudo(), "node", []int64{id}, map[string]any{"links": ids}); err != nil {
			t.Fatalf("link node %d: %v", id, err)
		}
	}
	return ids
}

// A small read of mutually linked records cannot answer megabytes: the
// answer's estimated size is bounded, counting each record each time it
// appears. Seen failing without the bound: the read answered 200 with
// 65,640 records (27 MB of JSON).
func TestReadAnswerBound(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			n := newNodes()
			close(n.release)
			e := bootOn(t, d.open, orm.Options{}, n.plugin())
			ids := seedNodes(t, e, 40, 400)
			spec := map[string]any{"name": map[string]any{}, "links": map[string]any{"name": map[string]any{},
				"links": map[string]any{"name": map[string]any{}}}}
			e.check(t, "bob-token", []bound{
				{"read", "/api/orm/node/read", map[string]any{"ids": ids, "spec": spec}, 400, "the limit is 16777216 bytes"},
				{"search", "/api/orm/node/search", map[string]any{"spec": spec}, 400, "the limit is 16777216 bytes"},
				{"fields", "/api/orm/node/read", map[string]any{"ids": ids, "spec": wideSpec(1001)}, 400, "1001 fields; the limit is 1000"},
				{"small", "/api/orm/node/read", map[string]any{"ids": ids[:1], "spec": []any{"name"}}, 200, `"id":1`},
			})
		})
	}
}

// wideSpec is a spec listing n field names.
func wideSpec(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprint("f", i)
	}
	return out
}

// Reads in flight share one budget: while one read holds its share,
// another that does not fit is refused at once with a 429 naming the
// budget, and it succeeds once the first is done; no read waits for
// another. Seen failing without the budget: the second read answered 200
// while the first held its records.
func TestReadsShareABudget(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			n := newNodes()
			e := bootOn(t, d.open, orm.Options{ReadBudget: 64 << 10}, n.plugin())
			ids := seedNodes(t, e, 40, 1000)
			done := make(chan error)
			go func() {
				_, err := e.ORM.Read(ormtest.Sudo(), "node", ids, orm.ReadSpec{"name": nil, "slow": nil})
				done <- err
			}()
			<-n.entered
			body := map[string]any{"ids": ids, "spec": []any{"name"}}
			e.check(t, "bob-token", []bound{{"while another holds the budget", "/api/orm/node/read", body, 429,
				"the limit is 65536 bytes"}})
			close(n.release)
			if err := <-done; err != nil {
				t.Fatalf("the first read: %v", err)
			}
			e.check(t, "bob-token", []bound{{"once it is done", "/api/orm/node/read", body, 200, `"id":40`}})
		})
	}
}
