package orm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// fuzzSchema is a small schema with every kind a domain path can cross.
func fuzzSchema() *schema {
	return build(contribs{models: []owned[Model]{
		{id: "1", plugin: "p", item: Model{Name: "contact", Fields: map[string]Field{
			"name": {Kind: KindChar}, "age": {Kind: KindInt}, "parent": {Kind: KindMany2One, Target: "contact"}}}},
		{id: "2", plugin: "p", item: Model{Name: "invoice", Fields: map[string]Field{
			"number": {Kind: KindChar}, "total": {Kind: KindFloat}, "paid": {Kind: KindBool}, "date": {Kind: KindDate},
			"state":   {Kind: KindSelection, Options: []Option{{Value: "draft"}, {Value: "paid"}}},
			"partner": {Kind: KindMany2One, Target: "contact"}, "meta": {Kind: KindJSON},
			"lines": {Kind: KindOne2Many, Target: "line", Inverse: "invoice"},
			"tags":  {Kind: KindMany2Many, Target: "contact"},
			"email": {Kind: KindRelated, Path: "partner.name"},
		}}},
		{id: "3", plugin: "p", item: Model{Name: "line", Fields: map[string]Field{
			"invoice": {Kind: KindMany2One, Target: "invoice"}, "product": {Kind: KindChar}}}},
	}})
}

// FuzzDomain feeds arbitrary JSON to the parser and compiler: neither may
// panic, a rejected domain is an ErrInvalid naming the model, and an
// accepted one compiles to SQL whose only quoted literals are the
// compiler's own, with one bound argument per placeholder.
func FuzzDomain(f *testing.F) {
	for _, seed := range []string{
		`[]`, `[["number","=","x' OR 1=1 --"]]`, `["|",["total",">",1],"!",["paid","=",true]]`,
		`[["partner.parent.name","ilike","%a_b\\"]]`, `[["lines.product","in",["a",null]]]`, `[["tags","not in",[1,2]]]`,
		`["&","&"]`, `[["email","like","50%"]]`, `[["date","<","2026-01-01"]]`, `[["meta","=","{}"]]`,
	} {
		f.Add(seed)
	}
	sch := fuzzSchema()
	f.Fuzz(func(t *testing.T, input string) {
		var v any
		if json.Unmarshal([]byte(input), &v) != nil {
			return
		}
		list, ok := v.([]any)
		if !ok {
			return
		}
		n, err := parseDomain(Domain(list))
		if err != nil {
			var de *domainError
			if !errors.As(err, &de) {
				t.Fatalf("parse %s: %T %v, want a domainError", input, err, err)
			}
			return
		}
		for _, d := range []contracts.Dialect{contracts.DialectSQLite, contracts.DialectPostgres} {
			c := &compiler{root: "invoice", dialect: d}
			sql, err := c.where(sch.models["invoice"], "t0", n)
			if err == nil {
				err = c.bound(sql)
			}
			if err != nil {
				var oe *Error
				if !errors.As(err, &oe) || !errors.Is(err, ErrInvalid) || oe.Model != "invoice" {
					t.Fatalf("compile %s: %v, want an ErrInvalid on invoice", input, err)
				}
				continue
			}
			rest := strings.NewReplacer(`'\'`, "", "'"+asciiUpper+"'", "", "'"+asciiLower+"'", "").Replace(sql)
			if strings.Contains(rest, "'") {
				t.Fatalf("compile %s: a literal reached the SQL: %s", input, sql)
			}
			if got := strings.Count(sql, "?"); got != len(c.args) {
				t.Fatalf("compile %s: %d placeholders for %d arguments: %s", input, got, len(c.args), sql)
			}
		}
	})
}
