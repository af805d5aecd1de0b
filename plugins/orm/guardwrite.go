package orm

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// compileGuards asks the guard, before the transaction, about every model
// and action the operation touches.
func (s *service) compileGuards(ctx context.Context, need map[*model][]Action) (map[string]string, map[string][]any, error) {
	conds, args := map[string]string{}, map[string][]any{}
	for m, actions := range need {
		for _, a := range actions {
			key := m.name + "/" + string(a)
			if _, done := conds[key]; done {
				continue
			}
			where, wargs, err := s.filter(ctx, m, a, nil)
			if err != nil {
				return nil, nil, err
			}
			conds[key], args[key] = where, wargs
		}
	}
	return conds, args, nil
}

// needs lists the models and actions an operation on m touches: its own
// action, what its x2many commands do to their targets, and a read of
// every model its many2one values point at.
func needs(m *model, action Action, p *prepared) map[*model][]Action {
	out := map[*model][]Action{m: {action}}
	refTargets(out, m, p)
	for _, x := range p.x2m {
		for _, c := range x.cmds {
			t := x.f.target
			switch c.op {
			case CmdCreate:
				out[t] = append(out[t], ActionCreate)
			case CmdUpdate:
				out[t] = append(out[t], ActionWrite)
			case CmdDelete:
				out[t] = append(out[t], ActionUnlink)
			default:
				if x.f.Kind == KindOne2Many {
					out[t] = append(out[t], ActionWrite)
				} else {
					out[t] = append(out[t], ActionRead)
				}
			}
			if c.values != nil {
				refTargets(out, t, c.values)
			}
		}
	}
	return out
}

func refTargets(out map[*model][]Action, m *model, p *prepared) {
	for name, v := range p.cols {
		if f := m.fields[name]; f.Kind == KindMany2One && v != nil {
			out[f.target] = append(out[f.target], ActionRead)
		}
	}
}

// matching returns which of ids of m match the guard's condition for action.
func (w *writer) matching(m *model, action Action, ids []int64) (map[int64]bool, error) {
	key := m.name + "/" + string(action)
	cond, ok := w.guards[key]
	if !ok {
		return nil, fmt.Errorf("orm: no guard condition compiled for %s of model %s", action, m.name)
	}
	set, arg := idSet(w.s.db.Dialect(), ids)
	q := fmt.Sprintf(`SELECT t0."id" AS "id" FROM %q t0 WHERE t0."id" IN (%s) AND %s`, Table(m.name), set, cond)
	rows, err := w.tx.Query(w.ctx, q, append([]any{arg}, w.gargs[key]...)...)
	if err != nil {
		return nil, fmt.Errorf("%s model %s: %w", action, m.name, err)
	}
	found := make(map[int64]bool, len(rows))
	for _, r := range rows {
		id, _ := asInt(r["id"])
		found[id] = true
	}
	return found, nil
}

// visible checks that every id of m exists and matches the guard's
// condition for action; the error names the ids that do not, absent and
// refused alike, so it tells nothing about records the user cannot see.
func (w *writer) visible(m *model, action Action, ids []int64) error {
	found, err := w.matching(m, action, ids)
	if err != nil {
		return err
	}
	var missing []string
	for _, id := range ids {
		if !found[id] {
			missing = append(missing, fmt.Sprint(id))
		}
	}
	if len(missing) > 0 {
		return errorf(ErrNotFound, at{m.name, ""}, "no record %s that this user may %s", strings.Join(missing, ", "), action)
	}
	return nil
}

// refs checks that every many2one value points at a record the user may
// read.
func (w *writer) refs(m *model, cols map[string]any) error {
	for _, name := range slices.Sorted(maps.Keys(cols)) {
		f, v := m.fields[name], cols[name]
		if f.Kind != KindMany2One || v == nil {
			continue
		}
		id, _ := asInt(v)
		found, err := w.matching(f.target, ActionRead, []int64{id})
		if err != nil {
			return err
		}
		if !found[id] {
			return errorf(ErrInvalid, at{m.name, name}, "%s record %d does not exist or may not be read by this user", f.Target, id)
		}
	}
	return nil
}

// touch remembers records the operation created or wrote, whose place in
// the guard's domain is checked once every command has run.
func (w *writer) touch(m *model, action Action, ids ...int64) {
	if w.touched == nil {
		w.touched = map[*model]map[Action][]int64{}
	}
	if w.touched[m] == nil {
		w.touched[m] = map[Action][]int64{}
	}
	w.touched[m][action] = append(w.touched[m][action], ids...)
}

// settled refuses the operation when a record it created or wrote ends
// outside what the guard lets the user create or write.
func (w *writer) settled() error {
	for m, byAction := range w.touched {
		for action, ids := range byAction {
			found, err := w.matching(m, action, ids)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if !found[id] {
					return errorf(ErrForbidden, at{m.name, ""}, "record %d would end outside what this user may %s", id, action)
				}
			}
		}
	}
	return nil
}
