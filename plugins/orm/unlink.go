package orm

import (
	"context"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// maxCascade bounds how many models deep an unlink's cascades may go.
const maxCascade = 32

func (s *service) Unlink(ctx context.Context, name string, ids []int64) error {
	sch, m, err := s.model(ctx, name)
	if err != nil {
		return err
	}
	if err := checkIDs(m, ids); err != nil {
		return err
	}
	op := s.opOf(ctx)
	w, err := s.newWriter(ctx, sch, op, map[*model][]Action{m: {ActionUnlink}})
	if err != nil {
		return err
	}
	change := Change{Model: m.name, Event: EventUnlink, IDs: ids, Op: op}
	if err := s.before(ctx, sch, change); err != nil {
		return err
	}
	err = s.db.Tx(ctx, func(tx contracts.Querier) error {
		w.tx = tx
		if err := w.visible(m, ActionUnlink, ids); err != nil {
			return err
		}
		return w.unlink(m, ids, 0)
	})
	if err != nil {
		return err
	}
	s.after(ctx, sch, change)
	return nil
}

// unlink deletes ids of m after applying the onDelete of every many2one
// pointing at m: restrict refuses, cascade deletes the referrers (and
// theirs), set null clears the reference. Join rows on either side go.
func (w *writer) unlink(m *model, ids []int64, depth int) error {
	if depth > maxCascade {
		return errorf(ErrConflict, at{m.name, ""}, "cascading deletes go deeper than %d models", maxCascade)
	}
	set, arg := idSet(w.s.db.Dialect(), ids)
	for _, f := range m.inbound {
		if f.broken != "" {
			continue
		}
		if err := w.onDelete(f, ids, depth); err != nil {
			return err
		}
	}
	for _, other := range w.sch.models {
		for _, f := range other.fields {
			if f.Kind != KindMany2Many || f.broken != "" {
				continue
			}
			if f.target == m {
				if err := w.exec(f, fmt.Sprintf(`DELETE FROM %q WHERE %q IN (%s)`, w.rel(f), joinDst, set), arg); err != nil {
					return err
				}
			}
			if other == m {
				if err := w.exec(f, fmt.Sprintf(`DELETE FROM %q WHERE %q IN (%s)`, w.rel(f), joinSrc, set), arg); err != nil {
					return err
				}
			}
		}
	}
	if _, err := w.tx.Query(w.ctx, fmt.Sprintf(`DELETE FROM %q WHERE "id" IN (%s)`, Table(m.name), set), arg); err != nil {
		return fmt.Errorf("unlink model %s: %w", m.name, err)
	}
	return nil
}

func (w *writer) onDelete(f *field, ids []int64, depth int) error {
	from := f.owner
	set, arg := idSet(w.s.db.Dialect(), ids)
	refs, err := w.tx.Query(w.ctx, fmt.Sprintf(`SELECT "id", %q AS "ref" FROM %q WHERE %q IN (%s)`, f.name, Table(from.name), f.name, set), arg)
	if err != nil {
		return fmt.Errorf("unlink: read model %s field %s: %w", from.name, f.name, err)
	}
	gone := map[int64]bool{}
	for _, id := range ids {
		gone[id] = true
	}
	var referrers []int64
	for _, r := range refs {
		id, _ := asInt(r["id"])
		if from == f.target && gone[id] {
			continue // a record pointing at itself or at one deleted with it
		}
		referrers = append(referrers, id)
	}
	if len(referrers) == 0 {
		return nil
	}
	switch f.OnDelete {
	case OnDeleteRestrict:
		what := "record " + joinIDs(referrers) + " refers"
		if len(referrers) > 1 {
			what = "records " + joinIDs(referrers) + " refer"
		}
		return errorf(ErrConflict, at{from.name, f.name}, "%s to the %s records being deleted, and onDelete is restrict", what, f.Target)
	case OnDeleteCascade:
		return w.unlink(from, referrers, depth+1)
	}
	rset, rarg := idSet(w.s.db.Dialect(), referrers)
	_, err = w.tx.Query(w.ctx, fmt.Sprintf(`UPDATE %q SET %q = NULL WHERE "id" IN (%s)`, Table(from.name), f.name, rset), rarg)
	if err != nil {
		return fmt.Errorf("unlink: clear model %s field %s: %w", from.name, f.name, err)
	}
	return nil
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	if len(parts) > 10 {
		parts = append(parts[:10], "...")
	}
	return strings.Join(parts, ", ")
}
