package orm

import (
	"fmt"
	"strings"
)

// orderTerm is one term of an order: a field and its direction.
type orderTerm struct {
	field string
	desc  bool
}

// parseOrder reads "field [asc|desc], ...".
func parseOrder(s string) ([]orderTerm, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []orderTerm
	for _, part := range strings.Split(s, ",") {
		words := strings.Fields(part)
		if len(words) == 0 || len(words) > 2 {
			return nil, fmt.Errorf("%q is not \"field [asc|desc]\"", strings.TrimSpace(part))
		}
		t := orderTerm{field: words[0]}
		if len(words) == 2 {
			switch strings.ToLower(words[1]) {
			case "asc":
			case "desc":
				t.desc = true
			default:
				return nil, fmt.Errorf("direction %q must be asc or desc", words[1])
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// orderBy compiles an order on model m at alias; ties break by id.
func orderBy(m *model, alias string, terms []orderTerm) (string, error) {
	var parts []string
	for _, t := range terms {
		if f := m.fields[t.field]; !isSystemField(t.field) && (f == nil || !f.stored()) || t.field == FieldDisplay {
			return "", &Error{Kind: ErrInvalid, Model: m.name, Field: t.field, Msg: "order needs a stored field of the model"}
		}
		dir := " ASC NULLS FIRST"
		if t.desc {
			dir = " DESC NULLS LAST"
		}
		parts = append(parts, fmt.Sprintf(`%s.%q`, alias, t.field)+dir)
	}
	return strings.Join(append(parts, alias+`."id" ASC`), ", "), nil
}
