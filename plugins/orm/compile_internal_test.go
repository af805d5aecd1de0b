package orm

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// chain is a schema with node, whose parent is a node.
func chain() *schema {
	return build(contribs{models: []owned[Model]{{id: "m", plugin: "p", system: true, item: Model{Name: "node",
		Fields: map[string]Field{"name": {Kind: KindChar}, "parent": {Kind: KindMany2One, Target: "node"}}}}}})
}

// compilePath compiles a term whose path crosses n parents, with the
// bounds lifted, and returns the SQL and the bytes allocated doing it.
func compilePath(t *testing.T, n int) (string, uint64) {
	t.Helper()
	m := chain().models["node"]
	path := append(strings.Split(strings.Repeat("parent.", n), ".")[:n], "name")
	c := &compiler{root: "node", dialect: contracts.DialectSQLite, lim: &compileLimits{hops: n, joins: n, bytes: 1 << 30}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sql, err := c.where(m, "t0", term{path: path, op: "=", value: "x", raw: "[...]"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("compile %d hops: %v", n, err)
	}
	return sql, after.TotalAlloc - before.TotalAlloc
}

// Compiling a path costs time and memory linear in its hops: twice the
// hops allocate about twice the bytes and make twice the SQL. It counts
// bytes, not time. Seen failing with each hop wrapping the SQL of the
// hops after it in a new string: 1,000 hops allocated 3.9 times what 500
// did.
func TestPathCompileIsLinear(t *testing.T) {
	small, a := compilePath(t, 500)
	large, b := compilePath(t, 1000)
	if ratio := float64(b) / float64(a); ratio > 2.6 {
		t.Errorf("compiling 1000 hops allocated %d bytes, 500 hops %d: ratio %.2f, want about 2 (linear)", b, a, ratio)
	}
	if got := strings.Count(large, "SELECT"); got != 1000 {
		t.Errorf("1000 hops compiled to %d subqueries, want 1000", got)
	}
	if ratio := float64(len(large)) / float64(len(small)); ratio > 2.1 {
		t.Errorf("SQL of 1000 hops is %.2f times that of 500, want about 2", ratio)
	}
}

// The compiled SQL is bounded in size, and a path in joins, with errors
// naming the limit.
func TestCompileBounds(t *testing.T) {
	m := chain().models["node"]
	for _, c := range []struct {
		name string
		lim  compileLimits
		hops int
		want string
	}{
		{"bytes", compileLimits{hops: 8, joins: 8, bytes: 100}, 2, "bytes of SQL; the limit is 100"},
		{"hops", compileLimits{hops: 2, joins: 8, bytes: 1 << 20}, 3, "crosses more than 2 relations (related fields' paths included); the limit is 2"},
		{"joins", compileLimits{hops: 8, joins: 2, bytes: 1 << 20}, 3, "crosses more than 2 relations in all (the guard's domains included); the limit is 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			comp := &compiler{root: "node", dialect: contracts.DialectSQLite, lim: &c.lim}
			path := append(strings.Split(strings.Repeat("parent.", c.hops), ".")[:c.hops], "name")
			sql, err := comp.where(m, "t0", term{path: path, op: "=", value: "x", raw: "[...]"})
			if err == nil {
				err = comp.bound(sql)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("compile %d hops with %+v: %v, want an error with %q", c.hops, c.lim, err, c.want)
			}
		})
	}
}

// BenchmarkPathCompile compiles a term crossing n parents; B/op grows
// linearly with n.
func BenchmarkPathCompile(b *testing.B) {
	m := chain().models["node"]
	for _, n := range []int{8, 64, 512} {
		b.Run("hops="+strconv.Itoa(n), func(b *testing.B) {
			path := append(strings.Split(strings.Repeat("parent.", n), ".")[:n], "name")
			b.ReportAllocs()
			for b.Loop() {
				c := &compiler{root: "node", dialect: contracts.DialectSQLite, lim: &compileLimits{hops: n, joins: n, bytes: 1 << 30}}
				if _, err := c.where(m, "t0", term{path: path, op: "=", value: "x", raw: "[...]"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
