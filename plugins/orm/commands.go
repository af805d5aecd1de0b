package orm

import (
	"fmt"
)

// commands applies p's x2many commands to each parent record.
func (w *writer) commands(p *prepared, parents []int64) error {
	for _, x := range p.x2m {
		for _, parent := range parents {
			for _, c := range x.cmds {
				if err := alive(w.ctx); err != nil {
					return err
				}
				var err error
				if x.f.Kind == KindOne2Many {
					err = w.one2many(x.f, parent, c)
				} else {
					err = w.many2many(x.f, parent, c)
				}
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// one2many applies a command by moving the targets' inverse.
func (w *writer) one2many(f *field, parent int64, c command) error {
	t, inv := f.target, f.Inverse
	switch c.op {
	case CmdCreate:
		if err := w.refs(t, c.values.cols); err != nil {
			return err
		}
		cols := map[string]any{inv: parent}
		for k, v := range c.values.cols {
			cols[k] = v
		}
		_, err := w.insert(t, cols)
		return err
	case CmdUpdate:
		if err := w.owned(f, parent, c.id); err != nil {
			return err
		}
		if err := w.visible(t, ActionWrite, []int64{c.id}); err != nil {
			return err
		}
		if err := w.refs(t, c.values.cols); err != nil {
			return err
		}
		return w.update(t, []int64{c.id}, c.values.cols)
	case CmdDelete:
		if err := w.owned(f, parent, c.id); err != nil {
			return err
		}
		if err := w.visible(t, ActionUnlink, []int64{c.id}); err != nil {
			return err
		}
		return w.unlink(t, []int64{c.id})
	case CmdLink:
		if err := w.visible(t, ActionWrite, []int64{c.id}); err != nil {
			return err
		}
		return w.update(t, []int64{c.id}, map[string]any{inv: parent})
	case CmdUnlink:
		if err := w.owned(f, parent, c.id); err != nil {
			return err
		}
		return w.detach(f, []int64{c.id})
	}
	return w.setOne2many(f, parent, c.ids)
}

// owned checks that record id of f's target belongs to parent.
func (w *writer) owned(f *field, parent, id int64) error {
	rows, err := w.tx.Query(w.ctx, fmt.Sprintf(`SELECT "id" FROM %q WHERE "id" = ? AND %q = ?`, Table(f.Target), f.Inverse), id, parent)
	if err != nil {
		return fmt.Errorf("model %s field %s: %w", f.owner.name, f.name, err)
	}
	if len(rows) == 0 {
		return errorf(ErrInvalid, at{f.owner.name, f.name}, "%s record %d is not one of record %d's", f.Target, id, parent)
	}
	return nil
}

// detach clears the inverse of ids; a required inverse cannot be cleared.
func (w *writer) detach(f *field, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if f.invert != nil && f.invert.Required {
		return errorf(ErrInvalid, at{f.owner.name, f.name}, "%s.%s is required, so its records cannot be unlinked; delete them instead",
			f.Target, f.Inverse)
	}
	if err := w.visible(f.target, ActionWrite, ids); err != nil {
		return err
	}
	return w.update(f.target, ids, map[string]any{f.Inverse: nil})
}

func (w *writer) setOne2many(f *field, parent int64, ids []int64) error {
	rows, err := w.tx.Query(w.ctx, fmt.Sprintf(`SELECT "id" FROM %q WHERE %q = ?`, Table(f.Target), f.Inverse), parent)
	if err != nil {
		return fmt.Errorf("model %s field %s: %w", f.owner.name, f.name, err)
	}
	keep := map[int64]bool{}
	for _, id := range ids {
		keep[id] = true
	}
	var drop []int64
	for _, r := range rows {
		if id, _ := asInt(r["id"]); !keep[id] {
			drop = append(drop, id)
		}
	}
	if err := w.detach(f, drop); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	if err := w.visible(f.target, ActionWrite, ids); err != nil {
		return err
	}
	return w.update(f.target, ids, map[string]any{f.Inverse: parent})
}

// many2many applies a command to the join table.
func (w *writer) many2many(f *field, parent int64, c command) error {
	t := f.target
	switch c.op {
	case CmdCreate:
		if err := w.refs(t, c.values.cols); err != nil {
			return err
		}
		id, err := w.insert(t, c.values.cols)
		if err != nil {
			return err
		}
		return w.linkRows(f, parent, []int64{id})
	case CmdUpdate:
		if err := w.visible(t, ActionWrite, []int64{c.id}); err != nil {
			return err
		}
		if err := w.refs(t, c.values.cols); err != nil {
			return err
		}
		return w.update(t, []int64{c.id}, c.values.cols)
	case CmdDelete:
		if err := w.visible(t, ActionUnlink, []int64{c.id}); err != nil {
			return err
		}
		return w.unlink(t, []int64{c.id})
	case CmdLink:
		return w.link(f, parent, []int64{c.id})
	case CmdUnlink:
		return w.exec(f, fmt.Sprintf(`DELETE FROM %q WHERE %q = ? AND %q = ?`, w.rel(f), joinSrc, joinDst), parent, c.id)
	}
	if err := w.exec(f, fmt.Sprintf(`DELETE FROM %q WHERE %q = ?`, w.rel(f), joinSrc), parent); err != nil {
		return err
	}
	return w.link(f, parent, c.ids)
}

func (w *writer) rel(f *field) string { return JoinTable(f.owner.name, f.name) }

func (w *writer) exec(f *field, q string, args ...any) error {
	if _, err := w.tx.Query(w.ctx, q, args...); err != nil {
		return fmt.Errorf("model %s field %s: %w", f.owner.name, f.name, err)
	}
	return nil
}

// link adds join rows to targets the user may read; a link already
// there stays.
func (w *writer) link(f *field, parent int64, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	found, err := w.matching(f.target, ActionRead, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !found[id] {
			return errorf(ErrInvalid, at{f.owner.name, f.name}, "%s record %d does not exist or may not be read by this user", f.Target, id)
		}
	}
	return w.linkRows(f, parent, ids)
}

// linkRows writes the join rows.
func (w *writer) linkRows(f *field, parent int64, ids []int64) error {
	q := fmt.Sprintf(`INSERT INTO %q (%q, %q) VALUES (?, ?) ON CONFLICT DO NOTHING`, w.rel(f), joinSrc, joinDst)
	for _, id := range ids {
		if err := alive(w.ctx); err != nil {
			return err
		}
		if err := w.exec(f, q, parent, id); err != nil {
			return err
		}
	}
	return nil
}
