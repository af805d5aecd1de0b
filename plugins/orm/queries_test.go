package orm_test

import (
	"fmt"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/orm/ormtest"
)

// A Read issues as many queries for 60 invoices as for 3: one per model
// and relation level (invoices, partners, their countries, lines, the tag
// join table and tags), never one per record. Seen failing with the
// many2one reader querying each target record on its own.
func TestReadQueriesDoNotGrow(t *testing.T) {
	rec := &ormtest.Recorder{Database: openSQLite(t)}
	s := ormtest.Suite{Open: openSQLite, Base: []kernel.Plugin{smshttp.Plugin(smshttp.Options{})}}
	e := s.Boot(t, rec, orm.Options{})
	fr := e.Create(t, "country", "FR", map[string]any{"code": "FR"})
	tag := e.Create(t, "tag", "t", map[string]any{"name": "t"})
	var ids []int64
	for i := range 60 {
		p := e.Create(t, "contact", fmt.Sprint(i), map[string]any{"name": fmt.Sprint("c", i), "country": fr})
		ids = append(ids, e.Create(t, "invoice", fmt.Sprint(i), map[string]any{"number": fmt.Sprint(i), "partner": p, "tags": []any{tag},
			"lines": []any{map[string]any{"op": "create", "values": map[string]any{"product": "x"}}}}))
	}
	spec := orm.ReadSpec{"number": nil, "partner": {"name": nil, "country": {"code": nil}}, "lines": {"product": nil},
		"tags": {"name": nil}, "partner_email": nil, "doubled": nil}
	count := func(ids []int64) int {
		rec.Reset()
		if _, err := e.ORM.Read(ormtest.Sudo(), "invoice", ids, spec); err != nil {
			t.Fatal(err)
		}
		return rec.Count()
	}
	few, many := count(ids[:3]), count(ids)
	if few != many || many > 8 {
		t.Fatalf("reading 3 invoices took %d queries and 60 took %d; want the same, at most 8", few, many)
	}
}
