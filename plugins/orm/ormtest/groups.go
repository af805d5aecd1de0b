package ormtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/plugins/orm"
)

func testReadGroup(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{})
	e.Seed(t)
	for _, c := range []struct {
		req  orm.GroupRequest
		want string
	}{
		{orm.GroupRequest{GroupBy: []string{"state"}, Aggregates: map[string]string{"total": "sum:total", "qty": "sum:qty", "avg": "avg:total"}},
			`[{"avg":100,"count":2,"qty":5,"state":"draft","total":100},{"avg":0,"count":1,"qty":null,"state":"paid","total":0},` +
				`{"avg":162.75,"count":2,"qty":5,"state":"posted","total":325.5}]`},
		{orm.GroupRequest{GroupBy: []string{"date:month"}}, `[{"count":1,"date:month":null},{"count":2,"date:month":"2026-01"},{"count":1,"date:month":"2026-02"},{"count":1,"date:month":"2026-03"}]`},
		{orm.GroupRequest{GroupBy: []string{"date:week"}, Domain: orm.Domain{[]any{"date", "!=", nil}}},
			`[{"count":1,"date:week":"2026-01-05"},{"count":1,"date:week":"2026-01-19"},{"count":1,"date:week":"2026-02-02"},{"count":1,"date:week":"2026-03-09"}]`},
		{orm.GroupRequest{GroupBy: []string{"date:year"}, Aggregates: map[string]string{"first": "min:date", "last": "max:date"}},
			`[{"count":1,"date:year":null,"first":null,"last":null},{"count":4,"date:year":"2026","first":"2026-01-05","last":"2026-03-15"}]`},
		{orm.GroupRequest{GroupBy: []string{"date:day"}, Domain: orm.Domain{[]any{"partner.country.code", "=", "FR"}}},
			`[{"count":1,"date:day":"2026-01-05"},{"count":1,"date:day":"2026-02-03"}]`},
		{orm.GroupRequest{GroupBy: []string{"state", "partner"}, Domain: orm.Domain{[]any{"state", "=", "posted"}}, Aggregates: map[string]string{"hi": "max:total"}},
			`[{"count":1,"hi":250.5,"partner":` + Show(e.ID("contact", "Beta")) + `,"state":"posted"},{"count":1,"hi":75,"partner":` + Show(e.ID("contact", "Ünïcode")) + `,"state":"posted"}]`},
		{orm.GroupRequest{Aggregates: map[string]string{"n": "sum:qty"}}, `[{"count":5,"n":10}]`},
		{orm.GroupRequest{GroupBy: []string{"paid_at:month"}, Domain: orm.Domain{[]any{"paid_at", "!=", nil}}}, `[{"count":1,"paid_at:month":"2026-01"}]`},
	} {
		got, err := e.ORM.ReadGroup(Sudo(), "invoice", c.req)
		if err != nil || Show(got) != c.want {
			t.Errorf("read_group %s =\n%s, %v\nwant\n%s", Show(c.req), Show(got), err, c.want)
		}
	}
	for _, c := range []struct {
		req orm.GroupRequest
		msg string
	}{
		{orm.GroupRequest{GroupBy: []string{"nope"}}, "field nope: groupBy needs a stored field"},
		{orm.GroupRequest{GroupBy: []string{"total:month"}}, "needs a date or datetime"},
		{orm.GroupRequest{GroupBy: []string{"date:hour"}}, "granularity"},
		{orm.GroupRequest{Aggregates: map[string]string{"x": "sum:notes"}}, "sum of a text field"},
		{orm.GroupRequest{Aggregates: map[string]string{"x": "sum:doubled"}}, "computed fields are not stored"},
		{orm.GroupRequest{Aggregates: map[string]string{"x": "median:total"}}, "must be count or"},
	} {
		if _, err := e.ORM.ReadGroup(Sudo(), "invoice", c.req); !errors.Is(err, orm.ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("read_group %s: %v, want ErrInvalid containing %q", Show(c.req), err, c.msg)
		}
	}
}
