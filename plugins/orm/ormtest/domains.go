package ormtest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/plugins/orm"
)

// domainCase is a domain over the fixture's invoices and the numbers it
// must match.
type domainCase struct {
	domain string
	want   []string
}

var domainCases = []domainCase{
	{`[]`, []string{"INV-1", "INV-2", "INV-3", "INV-5", "inv-4"}},
	{`[["state","=","draft"]]`, []string{"INV-1", "inv-4"}},
	{`[["state","!=","draft"]]`, []string{"INV-2", "INV-3", "INV-5"}},
	{`[["total","=",null]]`, []string{"inv-4"}},
	{`[["total","!=",null]]`, []string{"INV-1", "INV-2", "INV-3", "INV-5"}},
	{`[["total","!=",100]]`, []string{"INV-2", "INV-3", "INV-5", "inv-4"}},
	{`[["total",">",75]]`, []string{"INV-1", "INV-2"}},
	{`[["total",">=",75]]`, []string{"INV-1", "INV-2", "INV-5"}},
	{`[["total","<",100]]`, []string{"INV-3", "INV-5"}},
	{`[["total","<=",0]]`, []string{"INV-3"}},
	{`[["qty","in",[1,2]]]`, []string{"INV-1", "INV-2"}},
	{`[["qty","in",[1,null]]]`, []string{"INV-1", "INV-3"}},
	{`[["qty","not in",[1]]]`, []string{"INV-2", "INV-3", "INV-5", "inv-4"}},
	{`[["qty","not in",[1,null]]]`, []string{"INV-2", "INV-5", "inv-4"}},
	{`[["qty","in",[]]]`, nil},
	{`[["qty","not in",[]]]`, []string{"INV-1", "INV-2", "INV-3", "INV-5", "inv-4"}},
	{`[["notes","like","World"]]`, []string{"INV-1"}},
	{`[["notes","like","world"]]`, nil},
	{`[["notes","ilike","world"]]`, []string{"INV-1"}},
	{`[["notes","like","50%"]]`, []string{"INV-2"}},
	{`[["notes","like","%off_now"]]`, []string{"INV-2"}},
	{`[["notes","like","f_n"]]`, []string{"INV-2"}},
	{`[["notes","like","fxn"]]`, nil},
	{`[["notes","like","0%"]]`, nil},
	{`[["notes","like","% %"]]`, []string{"INV-1", "INV-2", "INV-5"}},
	{`[["notes","like","\\"]]`, []string{"inv-4"}},
	{`[["notes","like","*"]]`, nil},
	{`[["notes","ilike","ÄBC"]]`, []string{"INV-5"}},
	{`[["notes","ilike","äbc"]]`, nil},
	{`[["number","like","INV"]]`, []string{"INV-1", "INV-2", "INV-3", "INV-5"}},
	{`[["number","ilike","inv"]]`, []string{"INV-1", "INV-2", "INV-3", "INV-5", "inv-4"}},
	{`["|",["state","=","paid"],["total",">",200]]`, []string{"INV-2", "INV-3"}},
	{`["!",["state","=","draft"]]`, []string{"INV-2", "INV-3", "INV-5"}},
	{`["&",["state","=","draft"],["qty",">",1]]`, []string{"inv-4"}},
	{`[["state","=","posted"],["total",">",100]]`, []string{"INV-2"}},
	{`[["state","=","posted"],"|",["total",">",200],["qty","=",3]]`, []string{"INV-2", "INV-5"}},
	{`["!","|",["state","=","draft"],["state","=","paid"]]`, []string{"INV-2", "INV-5"}},
	{`[["partner.name","=","Acme"]]`, []string{"INV-1", "INV-3"}},
	{`[["partner.name","in",["Acme","Beta"]]]`, []string{"INV-1", "INV-2", "INV-3"}},
	{`[["partner.country.code","=","FR"]]`, []string{"INV-1", "INV-3"}},
	{`["!",["partner.country.code","=","FR"]]`, []string{"INV-2", "INV-5", "inv-4"}},
	{`[["partner.country.name","ilike","many"]]`, []string{"INV-2"}},
	{`[["lines.product","ilike","widget"]]`, []string{"INV-2", "INV-5"}},
	{`[["lines.qty",">",2]]`, []string{"INV-5"}},
	{`[["tags.name","=","big"]]`, []string{"INV-2"}},
	{`[["partner","=",null]]`, []string{"inv-4"}},
	{`[["tags","=",null]]`, []string{"INV-3", "INV-5", "inv-4"}},
	{`[["tags","!=",null]]`, []string{"INV-1", "INV-2"}},
	{`[["tags","!=",1]]`, []string{"INV-3", "INV-5", "inv-4"}},
	{`[["tags","not in",[2]]]`, []string{"INV-1", "INV-3", "INV-5", "inv-4"}},
	{`[["tags","in",[2]]]`, []string{"INV-2"}},
	{`[["lines","=",null]]`, []string{"INV-3", "inv-4"}},
	{`["|","|","|",["qty","=",1],["qty","=",2],["qty","=",3],["qty","=",4]]`, []string{"INV-1", "INV-2", "INV-5", "inv-4"}},
	{`[["partner_email","like","@x.de"]]`, []string{"INV-2"}},
	{`[["partner_country","=","FR"]]`, []string{"INV-1", "INV-3"}},
	{`[["date",">=","2026-01-20"]]`, []string{"INV-2", "INV-3", "INV-5"}},
	{`[["date","<","2026-02-01"]]`, []string{"INV-1", "INV-2"}},
	{`[["paid_at",">","2026-01-21T07:59:59Z"]]`, []string{"INV-2"}},
	{`[["paid_at",">","2026-01-21T08:00:00Z"]]`, nil},
	{`[["created_at","=","2026-03-04T05:06:07Z"],["number","=","INV-1"]]`, []string{"INV-1"}},
}

func testDomains(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{})
	e.Seed(t)
	for _, c := range domainCases {
		t.Run(c.domain, func(t *testing.T) {
			d, _ := JSON(t, c.domain).([]any)
			ids, err := e.ORM.Search(Sudo(), "invoice", orm.Domain(d), orm.SearchOptions{})
			if err != nil {
				t.Fatalf("search %s: %v", c.domain, err)
			}
			if got := e.Names("invoice", ids, false); !slices.Equal(got, c.want) {
				t.Fatalf("search %s = %v, want %v", c.domain, got, c.want)
			}
			n, err := e.ORM.Count(Sudo(), "invoice", orm.Domain(d))
			if err != nil || n != int64(len(c.want)) {
				t.Fatalf("count %s = %d, %v; want %d", c.domain, n, err, len(c.want))
			}
		})
	}
	t.Run("tags by id", func(t *testing.T) {
		ids, err := e.ORM.Search(Sudo(), "invoice", orm.Domain{[]any{"tags", "=", e.ID("tag", "urgent")}}, orm.SearchOptions{})
		if got := e.Names("invoice", ids, false); err != nil || !slices.Equal(got, []string{"INV-1", "INV-2"}) {
			t.Fatalf("tags = urgent: %v, %v; want [INV-1 INV-2]", got, err)
		}
	})
}

func testDomainErrors(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{})
	e.Seed(t)
	for _, c := range []struct{ domain, msg string }{
		{`[["nope","=",1]]`, "no field nope"},
		{`[["state","=","bogus"]]`, `want one of "draft", "posted", "paid"`},
		{`[["total",">","abc"]]`, "want a number"},
		{`["|",["state","=","draft"]]`, "operator | needs more"},
		{`[["state","~","x"]]`, "operator must be one of"},
		{`["&&"]`, "is not an operator"},
		{`[["doubled",">",1]]`, "cannot be searched"},
		{`[["notes","like","50%\\"]]`, "unpaired"},
		{`[["qty","in",5]]`, "needs a list"},
		{`[["qty","in",[` + strings.Repeat("1,", orm.MaxInValues) + `1]]]`, "takes at most 1000 values"},
		{`[["qty","like","5"]]`, "needs a text field"},
		{`[["partner.nope","=",1]]`, "model contact has no field nope"},
		{`[["total.x","=",1]]`, "not a relation"},
		{`[["total","<",null]]`, "cannot compare with null"},
		{`[[1,"=",1]]`, "path must be a field name"},
		{`[["state","="]]`, "is not an operator"},
		{"[" + strings.Repeat(`"!",`, orm.MaxDomainDepth+1) + `["qty","=",1]]`, "nest more than 100 deep"},
	} {
		t.Run(c.domain, func(t *testing.T) {
			d, _ := JSON(t, c.domain).([]any)
			_, err := e.ORM.Search(Sudo(), "invoice", orm.Domain(d), orm.SearchOptions{})
			var oe *orm.Error
			if !errors.Is(err, orm.ErrInvalid) || !errors.As(err, &oe) || oe.Model != "invoice" || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("search %s: error %v, want ErrInvalid on model invoice containing %q", c.domain, err, c.msg)
			}
		})
	}
}

func testOrder(t *testing.T, s Suite) {
	e := s.Boot(t, s.Open(t), orm.Options{})
	e.Seed(t)
	for _, c := range []struct {
		order string
		want  []string
	}{
		{"", []string{"INV-1", "INV-2", "INV-3", "INV-5", "inv-4"}}, // the model's order: bytes, upper case first
		{"notes", []string{"INV-3", "INV-2", "INV-1", "inv-4", "INV-5"}},
		{"notes desc", []string{"INV-5", "inv-4", "INV-1", "INV-2", "INV-3"}},
		{"state desc, total", []string{"INV-5", "INV-2", "INV-3", "inv-4", "INV-1"}},
		{"date desc", []string{"INV-5", "INV-3", "INV-2", "INV-1", "inv-4"}},
	} {
		ids, err := e.ORM.Search(Sudo(), "invoice", nil, orm.SearchOptions{Order: c.order})
		if got := e.Names("invoice", ids, true); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("order %q = %v, %v; want %v", c.order, got, err, c.want)
		}
	}
	ids, err := e.ORM.Search(Sudo(), "invoice", nil, orm.SearchOptions{Order: "number", Limit: 2, Offset: 1})
	if got := e.Names("invoice", ids, true); err != nil || !slices.Equal(got, []string{"INV-2", "INV-3"}) {
		t.Errorf("page 2 of 2 = %v, %v; want [INV-2 INV-3]", got, err)
	}
	if _, err := e.ORM.Search(Sudo(), "invoice", nil, orm.SearchOptions{Order: "doubled"}); !errors.Is(err, orm.ErrInvalid) {
		t.Errorf("order by a computed field: %v, want ErrInvalid", err)
	}
}
