package orm

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// writer applies checked values inside one transaction. Everything that
// may call out (the guard, hooks) ran before it started: on SQLite the
// transaction holds the only connection.
type writer struct {
	ctx    context.Context
	s      *service
	sch    *schema
	tx     contracts.Querier
	op     OpContext
	stamp  string
	guards map[string]string // model+"/"+action -> compiled guard condition on t0
	gargs  map[string][]any
}

// compileGuards asks the guard, before the transaction, about every model
// and action the operation touches.
func (s *service) compileGuards(ctx context.Context, sch *schema, need map[*model][]Action) (map[string]string, map[string][]any, error) {
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

// needs lists the models and actions p's commands touch besides the
// operation's own.
func needs(m *model, action Action, p *prepared) map[*model][]Action {
	out := map[*model][]Action{m: {action}}
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
				}
			}
		}
	}
	return out
}

// visible checks that every id of m matches the guard's condition for
// action; the error names the ids that do not (absent or refused alike).
func (w *writer) visible(m *model, action Action, ids []int64) error {
	key := m.name + "/" + string(action)
	set, arg := idSet(w.s.db.Dialect(), ids)
	q := fmt.Sprintf(`SELECT t0."id" AS "id" FROM %q t0 WHERE t0."id" IN (%s) AND %s`, Table(m.name), set, w.guards[key])
	rows, err := w.tx.Query(w.ctx, q, append([]any{arg}, w.gargs[key]...)...)
	if err != nil {
		return fmt.Errorf("%s model %s: %w", action, m.name, err)
	}
	found := map[int64]bool{}
	for _, r := range rows {
		id, _ := asInt(r["id"])
		found[id] = true
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

// refs checks that every many2one value points at an existing record.
func (w *writer) refs(m *model, cols map[string]any) error {
	for _, name := range slices.Sorted(maps.Keys(cols)) {
		f, v := m.fields[name], cols[name]
		if f.Kind != KindMany2One || v == nil {
			continue
		}
		rows, err := w.tx.Query(w.ctx, fmt.Sprintf(`SELECT "id" FROM %q WHERE "id" = ?`, Table(f.target.name)), v)
		if err != nil {
			return fmt.Errorf("check model %s field %s: %w", m.name, name, err)
		}
		if len(rows) == 0 {
			return errorf(ErrInvalid, at{m.name, name}, "%s record %v does not exist", f.Target, v)
		}
	}
	return nil
}

func (w *writer) userArg() any {
	if w.op.UserID == 0 {
		return nil
	}
	return w.op.UserID
}

// insert creates one row of m and checks the guard's create condition on it.
func (w *writer) insert(m *model, cols map[string]any) (int64, error) {
	if err := w.refs(m, cols); err != nil {
		return 0, err
	}
	names := []string{FieldCreatedAt, FieldUpdatedAt, FieldCreatedBy, FieldUpdatedBy}
	args := []any{w.stamp, w.stamp, w.userArg(), w.userArg()}
	for _, n := range slices.Sorted(maps.Keys(cols)) {
		names, args = append(names, n), append(args, cols[n])
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	q := fmt.Sprintf(`INSERT INTO %q (%s) VALUES (%s) RETURNING "id"`, Table(m.name), strings.Join(quoted, ", "),
		strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", "))
	rows, err := w.tx.Query(w.ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("create in model %s: %w", m.name, err)
	}
	id, _ := asInt(rows[0]["id"])
	if err := w.visible(m, ActionCreate, []int64{id}); err != nil {
		return 0, errorf(ErrForbidden, at{m.name, ""}, "the record would be outside what this user may create")
	}
	return id, nil
}

// update writes cols to the rows of m with ids.
func (w *writer) update(m *model, ids []int64, cols map[string]any) error {
	if err := w.refs(m, cols); err != nil {
		return err
	}
	sets := []string{`"updated_at" = ?`, `"updated_by" = ?`}
	args := []any{w.stamp, w.userArg()}
	for _, n := range slices.Sorted(maps.Keys(cols)) {
		sets, args = append(sets, fmt.Sprintf("%q = ?", n)), append(args, cols[n])
	}
	set, arg := idSet(w.s.db.Dialect(), ids)
	q := fmt.Sprintf(`UPDATE %q SET %s WHERE "id" IN (%s)`, Table(m.name), strings.Join(sets, ", "), set)
	if _, err := w.tx.Query(w.ctx, q, append(args, arg)...); err != nil {
		return fmt.Errorf("write model %s: %w", m.name, err)
	}
	return nil
}

func (s *service) Create(ctx context.Context, model string, values map[string]any) (int64, error) {
	sch, m, err := s.model(ctx, model)
	if err != nil {
		return 0, err
	}
	op := s.opOf(ctx)
	p, err := preparer{sch: sch, op: op, s: s}.prepare(m, values, true)
	if err != nil {
		return 0, err
	}
	w, err := s.newWriter(ctx, sch, op, needs(m, ActionCreate, p))
	if err != nil {
		return 0, err
	}
	change := Change{Model: m.name, Event: EventCreate, Values: p.raw, Op: op}
	if err := s.before(ctx, sch, change); err != nil {
		return 0, err
	}
	var id int64
	err = s.db.Tx(ctx, func(tx contracts.Querier) error {
		w.tx = tx
		if id, err = w.insert(m, p.cols); err != nil {
			return err
		}
		return w.commands(p, []int64{id})
	})
	if err != nil {
		return 0, err
	}
	change.IDs = []int64{id}
	s.after(ctx, sch, change)
	return id, nil
}

func (s *service) Write(ctx context.Context, model string, ids []int64, values map[string]any) error {
	sch, m, err := s.model(ctx, model)
	if err != nil {
		return err
	}
	if err := checkIDs(m, ids); err != nil {
		return err
	}
	op := s.opOf(ctx)
	p, err := preparer{sch: sch, op: op, s: s}.prepare(m, values, false)
	if err != nil {
		return err
	}
	w, err := s.newWriter(ctx, sch, op, needs(m, ActionWrite, p))
	if err != nil {
		return err
	}
	change := Change{Model: m.name, Event: EventWrite, IDs: ids, Values: p.raw, Op: op}
	if err := s.before(ctx, sch, change); err != nil {
		return err
	}
	err = s.db.Tx(ctx, func(tx contracts.Querier) error {
		w.tx = tx
		if err := w.visible(m, ActionWrite, ids); err != nil {
			return err
		}
		if err := w.update(m, ids, p.cols); err != nil {
			return err
		}
		if err := w.commands(p, ids); err != nil {
			return err
		}
		if err := w.visible(m, ActionWrite, ids); err != nil {
			return errorf(ErrForbidden, at{m.name, ""}, "the write would move records outside what this user may write")
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.after(ctx, sch, change)
	return nil
}

func (s *service) newWriter(ctx context.Context, sch *schema, op OpContext, need map[*model][]Action) (*writer, error) {
	conds, args, err := s.compileGuards(ctx, sch, need)
	if err != nil {
		return nil, err
	}
	return &writer{ctx: ctx, s: s, sch: sch, op: op, stamp: s.now().UTC().Format(datetimeLayout), guards: conds, gargs: args}, nil
}

func checkIDs(m *model, ids []int64) error {
	if len(ids) == 0 {
		return errorf(ErrInvalid, at{m.name, ""}, "no record ids given")
	}
	for _, id := range ids {
		if id < 1 {
			return errorf(ErrInvalid, at{m.name, ""}, "record id %d must be a whole number from 1", id)
		}
	}
	return nil
}
