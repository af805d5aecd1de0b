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
	// touched are the records created and written, checked against the
	// guard once every command has run.
	touched map[*model]map[Action][]int64
	// files are the files of the records an unlink deletes, deleted from
	// the object store once it commits.
	files []Binary
	// deleted counts the records an unlink deletes, cascades included.
	deleted int
}

func (w *writer) userArg() any {
	if w.op.UserID == 0 {
		return nil
	}
	return w.op.UserID
}

// insert creates one row of m; settled checks it against the guard once
// every command has run. Callers check the many2one values first (refs).
func (w *writer) insert(m *model, cols map[string]any) (int64, error) {
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
	w.touch(m, ActionCreate, id)
	return id, nil
}

// update writes cols to the rows of m with ids.
func (w *writer) update(m *model, ids []int64, cols map[string]any) error {
	sets := []string{`"updated_at" = ?`, `"updated_by" = ?`}
	args := []any{w.stamp, w.userArg()}
	for _, n := range slices.Sorted(maps.Keys(cols)) {
		sets, args = append(sets, fmt.Sprintf("%q = ?", n)), append(args, cols[n])
	}
	w.touch(m, ActionWrite, ids...)
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
	if err := checkCost(m, p, EventCreate, 1); err != nil {
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
		if err := w.refs(m, p.cols); err != nil {
			return err
		}
		if id, err = w.insert(m, p.cols); err != nil {
			return err
		}
		if err := w.commands(p, []int64{id}); err != nil {
			return err
		}
		return w.settled()
	})
	if err != nil {
		return 0, err
	}
	change.IDs = []int64{id}
	s.spent(ctx, costOf(p, 1))
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
	if err := checkCost(m, p, EventWrite, len(ids)); err != nil {
		return err
	}
	w, err := s.newWriter(ctx, sch, op, needs(m, ActionWrite, p))
	if err != nil {
		return err
	}
	// The records are checked before the hooks run, so a hook never runs
	// on records the user may not write, and again in the transaction.
	w.tx = s.db
	if err := w.visible(m, ActionWrite, ids); err != nil {
		return err
	}
	change := Change{Model: m.name, Event: EventWrite, IDs: ids, Values: p.raw, Op: op}
	if err := s.before(ctx, sch, change); err != nil {
		return err
	}
	tracked := s.trackedIn(m, p.raw)
	err = s.db.Tx(ctx, func(tx contracts.Querier) error {
		w.tx = tx
		if err := w.visible(m, ActionWrite, ids); err != nil {
			return err
		}
		if err := w.refs(m, p.cols); err != nil {
			return err
		}
		var before map[int64]map[string]any
		if len(tracked) > 0 {
			if before, err = w.snapshot(m, ids, tracked); err != nil {
				return err
			}
		}
		if err := w.update(m, ids, p.cols); err != nil {
			return err
		}
		if err := w.commands(p, ids); err != nil {
			return err
		}
		if len(tracked) > 0 {
			after, err := w.snapshot(m, ids, tracked)
			if err != nil {
				return err
			}
			change.Tracked = diff(before, after)
		}
		return w.settled()
	})
	if err != nil {
		return err
	}
	s.spent(ctx, costOf(p, len(ids)))
	s.after(ctx, sch, change)
	return nil
}

func (s *service) newWriter(ctx context.Context, sch *schema, op OpContext, need map[*model][]Action) (*writer, error) {
	conds, args, err := s.compileGuards(ctx, need)
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
