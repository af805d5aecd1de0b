package orm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/orm/ormtest"
)

var benchDrivers = []struct {
	name string
	open ormtest.Open
}{{"sqlite", openSQLite}, {"postgres", openPostgres}}

// bootBench boots the fixture's models on db, recording statements.
func bootBench(b *testing.B, open ormtest.Open) (*ormtest.Env, *ormtest.Recorder) {
	rec := &ormtest.Recorder{Database: open(b)}
	s := ormtest.Suite{Open: open, Base: []kernel.Plugin{smshttp.Plugin(smshttp.Options{})}}
	return s.Boot(b, rec, orm.Options{}), rec
}

// BenchmarkRead reads n invoices with their partner and their three lines
// each. queries/op stays the same whatever n: one query per model and
// relation level.
func BenchmarkRead(b *testing.B) {
	for _, d := range benchDrivers {
		for _, n := range []int{10, 1000} {
			b.Run(fmt.Sprintf("%s/invoices=%d", d.name, n), func(b *testing.B) {
				e, rec := bootBench(b, d.open)
				ids := seedInvoices(b, e, n)
				spec := orm.ReadSpec{"number": nil, "total": nil, "partner": {"name": nil}, "lines": {"product": nil, "qty": nil}}
				rec.Reset()
				b.ResetTimer()
				for b.Loop() {
					recs, err := e.ORM.Read(ormtest.Sudo(), "invoice", ids, spec)
					if err != nil || len(recs) != n {
						b.Fatalf("read: %d records, %v", len(recs), err)
					}
				}
				b.ReportMetric(float64(rec.Count())/float64(b.N), "queries/op")
			})
		}
	}
}

func seedInvoices(b *testing.B, e *ormtest.Env, n int) []int64 {
	b.Helper()
	var partners []int64
	for i := range max(n/10, 1) {
		partners = append(partners, e.Create(b, "contact", fmt.Sprint("c", i), map[string]any{"name": fmt.Sprint("Contact ", i)}))
	}
	ids := make([]int64, n)
	for i := range n {
		lines := make([]any, 3)
		for j := range lines {
			lines[j] = map[string]any{"op": "create", "values": map[string]any{"product": fmt.Sprint("p", j), "qty": j + 1}}
		}
		ids[i] = e.Create(b, "invoice", fmt.Sprint("i", i), map[string]any{"number": fmt.Sprintf("INV-%06d", i),
			"partner": partners[i%len(partners)], "total": float64(i), "lines": lines})
	}
	return ids
}

// bulkRows is how many invoices the search and read_group benchmarks hold.
const bulkRows = 100_000

// seedBulk writes bulkRows invoices, 1,000 contacts and 50 countries with
// multi-row inserts (the ORM has already made the tables).
func seedBulk(b *testing.B, db contracts.Database) {
	b.Helper()
	ctx := context.Background()
	insert := func(table string, cols []string, n int, row func(i int) []any) {
		const chunk = 500
		err := db.Tx(ctx, func(tx contracts.Querier) error {
			for start := 0; start < n; start += chunk {
				end := min(start+chunk, n)
				var marks []string
				var args []any
				for i := start; i < end; i++ {
					vals := append([]any{"2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"}, row(i)...)
					marks = append(marks, "("+strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")+")")
					args = append(args, vals...)
				}
				q := fmt.Sprintf(`INSERT INTO %q ("created_at", "updated_at", %s) VALUES %s`, table, `"`+strings.Join(cols, `", "`)+`"`, strings.Join(marks, ", "))
				if _, err := tx.Query(ctx, q, args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("seed %s: %v", table, err)
		}
	}
	insert("m_country", []string{"code", "name"}, 50, func(i int) []any { return []any{fmt.Sprintf("C%02d", i), fmt.Sprint("Country ", i)} })
	insert("m_contact", []string{"name", "country"}, 1000, func(i int) []any { return []any{fmt.Sprint("Contact ", i), int64(i%50 + 1)} })
	insert("m_invoice", []string{"number", "partner", "date", "total", "state"}, bulkRows, func(i int) []any {
		day := 1 + i%28
		month := 1 + (i/28)%24
		return []any{fmt.Sprintf("INV-%06d", i), int64(i%1000 + 1), fmt.Sprintf("%04d-%02d-%02d", 2025+(month-1)/12, (month-1)%12+1, day),
			float64(i % 997), []string{"draft", "posted", "paid"}[i%3]}
	})
	if db.Dialect() == contracts.DialectPostgres {
		if err := db.Exec(ctx, "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchDotted finds the invoices whose partner's country has a
// code (a two-level dotted domain) among 100,000, with the ORM and with
// the SQL a person would write for the same question.
func BenchmarkSearchDotted(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			e, _ := bootBench(b, d.open)
			seedBulk(b, e.DB)
			const want = bulkRows / 50
			b.Run("orm", func(b *testing.B) {
				for b.Loop() {
					ids, err := e.ORM.Search(ormtest.Sudo(), "invoice", orm.Domain{[]any{"partner.country.code", "=", "C07"}},
						orm.SearchOptions{Limit: orm.MaxLimit, Order: "id"})
					if err != nil || len(ids) != want {
						b.Fatalf("search: %d ids, %v", len(ids), err)
					}
				}
			})
			// The same question by hand, as joins and as nested IN subqueries
			// (which SQLite plans far better than the joins).
			for name, q := range map[string]string{
				"sql-join": `SELECT i."id" AS "id" FROM "m_invoice" i JOIN "m_contact" c ON c."id" = i."partner" ` +
					`JOIN "m_country" k ON k."id" = c."country" WHERE k."code" = ? ORDER BY i."id" LIMIT ?`,
				"sql-in": `SELECT "id" FROM "m_invoice" WHERE "partner" IN (SELECT "id" FROM "m_contact" WHERE "country" IN ` +
					`(SELECT "id" FROM "m_country" WHERE "code" = ?)) ORDER BY "id" LIMIT ?`,
			} {
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						rows, err := e.DB.Query(context.Background(), q, "C07", int64(orm.MaxLimit))
						if err != nil || len(rows) != want {
							b.Fatalf("sql: %d rows, %v", len(rows), err)
						}
					}
				})
			}
		})
	}
}

// BenchmarkReadGroupMonth groups 100,000 invoices by month with a count
// and a sum, with the ORM and with hand-written SQL.
func BenchmarkReadGroupMonth(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			e, _ := bootBench(b, d.open)
			seedBulk(b, e.DB)
			b.Run("orm", func(b *testing.B) {
				for b.Loop() {
					groups, err := e.ORM.ReadGroup(ormtest.Sudo(), "invoice", orm.GroupRequest{GroupBy: []string{"date:month"},
						Aggregates: map[string]string{"total": "sum:total"}})
					if err != nil || len(groups) != 24 {
						b.Fatalf("read_group: %d groups, %v", len(groups), err)
					}
				}
			})
			b.Run("sql", func(b *testing.B) {
				q := `SELECT substr("date", 1, 7) AS "m", COUNT(*) AS "n", SUM("total") AS "s" FROM "m_invoice" GROUP BY substr("date", 1, 7) ORDER BY 1`
				for b.Loop() {
					rows, err := e.DB.Query(context.Background(), q)
					if err != nil || len(rows) != 24 {
						b.Fatalf("sql: %d rows, %v", len(rows), err)
					}
				}
			})
		})
	}
}
