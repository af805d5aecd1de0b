package orm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/orm/ormtest"
)

// drivers are the databases the bound tests run on; Postgres is skipped
// unless SMS_TEST_POSTGRES_URL is set.
var drivers = []struct {
	name string
	open ormtest.Open
}{{"sqlite", openSQLite}, {"postgres", openPostgres}}

// bootOn boots the seeded fixture on a fresh database of open, with the
// credentials of TestREST, byName and the given plugins.
func bootOn(t *testing.T, open ormtest.Open, opts orm.Options, plugins ...kernel.Plugin) *agentEnv {
	t.Helper()
	exec := kerneltest.NewExecutor()
	s := ormtest.Suite{Open: open, Executor: exec, Base: []kernel.Plugin{smshttp.Plugin(smshttp.Options{Credentials: creds})}}
	if opts.ContextOf == nil {
		opts.ContextOf = byName
	}
	e := s.Boot(t, s.Open(t), opts, plugins...)
	e.Seed(t)
	v, err := e.K.GetValue(smshttp.Key)
	if err != nil {
		t.Fatal(err)
	}
	return &agentEnv{Env: e, exec: exec, srv: v.(smshttp.Service)}
}

// bound is one request past (or just within) a bound, and the answer.
type bound struct {
	name, path string
	body       any
	status     int
	want       string // a fragment of the answer
}

func (e *agentEnv) check(t *testing.T, token string, cases []bound) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw, err := json.Marshal(c.body)
			if err != nil {
				t.Fatal(err)
			}
			status, out := e.call(t, restCall{token, "POST", c.path, string(raw)})
			got, _ := json.Marshal(out)
			if status != c.status || !strings.Contains(string(got), c.want) {
				t.Fatalf("POST %s = %d %.300s; want %d with %s", c.path, status, got, c.status, c.want)
			}
		})
	}
}

// hops is a domain path of n hops on invoice, alternating partner and
// invoices, ending at number.
func hops(n int) string {
	parts := make([]string, 0, n+1)
	for i := range n {
		parts = append(parts, []string{"partner", "invoices"}[i%2])
	}
	if n%2 == 1 {
		return strings.Join(append(parts, "name"), ".")
	}
	return strings.Join(append(parts, "number"), ".")
}

// repeat is a domain of n copies of term.
func repeat(n int, term any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = term
	}
	return out
}

// Domain paths and compiled queries are bounded, and a request past a
// bound is a 400 naming it, never the database's 500. Seen failing without
// the bounds: the 6,000-hop path answered 500 (SQLite: "parser stack
// overflow"), the 9-hop path and the 1,000 deep terms 200.
func TestDomainBounds(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			e := bootOn(t, d.open, orm.Options{})
			e.check(t, "bob-token", []bound{
				{"6000 hops", "/api/orm/invoice/search", map[string]any{"domain": []any{[]any{hops(6000), "=", "x"}}},
					400, "domain path has 6000 hops; the limit is 8"},
				{"9 hops", "/api/orm/invoice/search", map[string]any{"domain": []any{[]any{hops(9), "=", "x"}}},
					400, "has 9 hops; the limit is 8"},
				{"8 hops", "/api/orm/invoice/search", map[string]any{"domain": []any{[]any{hops(8), "=", "INV-1"}}},
					200, `"ids":[1,3]`},
				{"joins", "/api/orm/invoice/search", map[string]any{"domain": repeat(1000, []any{hops(8), "=", "INV-1"})},
					400, "the limit is 256"},
				{"related hops", "/api/orm/invoice/search", map[string]any{"domain": []any{[]any{"partner_country", "=", "FR"}}},
					200, `"ids":[1,3]`},
			})
		})
	}
}

// One create or write inserts at most MaxJoinRows join rows and writes at
// most MaxWriteRows rows, refused before the transaction so nothing is
// half applied. Seen failing without the bounds: both writes answered 200
// after 10,005 inserts.
func TestWriteBounds(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			e := bootOn(t, d.open, orm.Options{})
			tags := make([]any, 2001)
			for i := range tags {
				tags[i] = []int64{e.ID("tag", "urgent"), e.ID("tag", "big")}[i%2]
			}
			lines := repeat(2001, map[string]any{"op": "create", "values": map[string]any{"product": "x"}})
			ids := []int64{1, 2, 3, 4, 5}
			e.check(t, "root-token", []bound{
				{"links", "/api/orm/invoice/write", map[string]any{"ids": ids, "values": map[string]any{"tags": tags, "total": 1}},
					400, "would insert or delete 10005 join rows; the limit is 10000"},
				{"link commands", "/api/orm/invoice/write", map[string]any{"ids": ids, "values": map[string]any{
					"tags": repeat(2001, map[string]any{"op": "link", "id": 1})}}, 400, "the limit is 10000"},
				{"rows", "/api/orm/invoice/write", map[string]any{"ids": ids, "values": map[string]any{"lines": lines}},
					400, "would write 10010 rows; the limit is 10000"},
				{"create", "/api/orm/invoice/create", map[string]any{"values": map[string]any{"number": "N", "lines": repeat(10001,
					map[string]any{"op": "create", "values": map[string]any{}})}}, 400, "the limit is 10000"},
			})
			recs, err := e.ORM.Read(ormtest.Sudo(), "invoice", ids, orm.ReadSpec{"tags": nil, "lines": nil, "total": nil})
			want := `[{"id":1,"lines":[1],"tags":[1],"total":100},{"id":2,"lines":[2,3],"tags":[1,2],"total":250.5},` +
				`{"id":3,"lines":[],"tags":[],"total":0},{"id":4,"lines":[],"tags":[],"total":null},{"id":5,"lines":[4],"tags":[],"total":75}]`
			if got := ormtest.Show(recs); err != nil || got != want {
				t.Fatalf("invoices after the refused writes = %s, %v; want %s", got, err, want)
			}
		})
	}
}

// read_group's groupBy, aggregates and their product are bounded. Seen
// failing without the bounds: 9 groupBy entries and 33 aggregates
// answered 200, 2,000 groupBy entries 500 (SQLite: too many columns).
func TestReadGroupBounds(t *testing.T) {
	aggs := func(n int) map[string]any {
		out := map[string]any{}
		for i := range n {
			out[fmt.Sprint("a", i)] = "sum:total"
		}
		return out
	}
	group := func(n int) []any { return repeat(n, "state") }
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			e := bootOn(t, d.open, orm.Options{})
			e.check(t, "bob-token", []bound{
				{"groupBy", "/api/orm/invoice/read_group", map[string]any{"groupBy": group(9)}, 400, "groupBy has 9 entries; the limit is 8"},
				{"huge groupBy", "/api/orm/invoice/read_group", map[string]any{"groupBy": group(2000)}, 400, "the limit is 8"},
				{"aggregates", "/api/orm/invoice/read_group", map[string]any{"groupBy": group(1), "aggregates": aggs(33)},
					400, "33 aggregates; the limit is 32"},
				{"product", "/api/orm/invoice/read_group", map[string]any{"groupBy": group(8), "aggregates": aggs(17)},
					400, "8 groupBy entries times 17 aggregates is 136; the limit is 128"},
				{"within", "/api/orm/invoice/read_group", map[string]any{"groupBy": group(8), "aggregates": aggs(16)},
					200, `"count":1`},
			})
		})
	}
}
