package orm

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// MaxCascade bounds how many records one unlink may delete, its cascades
// included.
const MaxCascade = 100_000

func (s *service) Unlink(ctx context.Context, name string, ids []int64) error {
	sch, m, err := s.model(ctx, name)
	if err != nil {
		return err
	}
	if err := checkIDs(m, ids); err != nil {
		return err
	}
	if err := checkUnlinkIDs(m, ids); err != nil {
		return err
	}
	op := s.opOf(ctx)
	w, err := s.newWriter(ctx, sch, op, map[*model][]Action{m: {ActionUnlink}})
	if err != nil {
		return err
	}
	w.tx = s.db // checked before the hooks run, and again in the transaction
	if err := w.visible(m, ActionUnlink, ids); err != nil {
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
		w.files = nil // a retried transaction reads them again
		return w.unlink(m, ids)
	})
	if err != nil {
		return err
	}
	if len(w.files) > 0 {
		contracts.AfterCommit(ctx, func() { s.files.drop(context.WithoutCancel(ctx), w.files) })
	}
	s.spent(ctx, cost{rows: w.deleted})
	s.after(ctx, sch, change)
	return nil
}

// deletion is the closure of one unlink: every record it deletes, by
// model, and the references it must refuse or clear.
type deletion struct {
	gone     map[*model]map[int64]bool
	restrict []reference // referrers that must be deleted too, or the unlink fails
	clear    []reference // referrers whose reference becomes null
	count    int
}

// reference is records of f's model pointing through f.
type reference struct {
	f   *field
	ids []int64
}

// unlink deletes ids of m and what their onDelete policies cascade to,
// walking the references breadth first with a visited set, so cycles and
// deep trees end; restrict is judged on the whole closure, and set null
// clears only references that survive.
func (w *writer) unlink(m *model, ids []int64) error {
	d := &deletion{gone: map[*model]map[int64]bool{}}
	queue := []reference{{f: &field{owner: m}, ids: ids}}
	for len(queue) > 0 {
		if err := alive(w.ctx); err != nil {
			return err
		}
		next := queue[0]
		queue = queue[1:]
		fresh, err := d.add(next.f.owner, next.ids)
		if err != nil {
			return err
		}
		if len(fresh) == 0 {
			continue
		}
		more, err := w.referrers(d, next.f.owner, fresh)
		if err != nil {
			return err
		}
		queue = append(queue, more...)
	}
	if err := d.restricted(); err != nil {
		return err
	}
	w.deleted = d.count
	if err := w.clearRefs(d); err != nil {
		return err
	}
	for gm, set := range d.gone {
		ids := slices.Sorted(maps.Keys(set))
		if err := w.binaries(gm, ids); err != nil {
			return err
		}
		if err := w.deleteRows(gm, ids); err != nil {
			return err
		}
	}
	return nil
}

// add marks ids of m deleted and returns those not marked before.
func (d *deletion) add(m *model, ids []int64) ([]int64, error) {
	if d.gone[m] == nil {
		d.gone[m] = map[int64]bool{}
	}
	var fresh []int64
	for _, id := range ids {
		if !d.gone[m][id] {
			d.gone[m][id] = true
			fresh = append(fresh, id)
		}
	}
	if d.count += len(fresh); d.count > MaxCascade {
		return nil, errorf(ErrConflict, at{m.name, ""}, "the unlink would delete more than %d records with its cascades", MaxCascade)
	}
	return fresh, nil
}

// referrers reads the records pointing at ids of m and sorts them by the
// effective onDelete of the field they point through; cascades are
// returned to be deleted in turn.
func (w *writer) referrers(d *deletion, m *model, ids []int64) ([]reference, error) {
	var cascade []reference
	set, arg := idSet(w.s.db.Dialect(), ids)
	for _, f := range m.inbound {
		if f.broken != "" {
			continue
		}
		rows, err := w.tx.Query(w.ctx, fmt.Sprintf(`SELECT "id" FROM %q WHERE %q IN (%s)`, Table(f.owner.name), f.name, set), arg)
		if err != nil {
			return nil, fmt.Errorf("unlink: read model %s field %s: %w", f.owner.name, f.name, err)
		}
		if len(rows) == 0 {
			continue
		}
		ref := reference{f: f}
		for _, r := range rows {
			id, _ := asInt(r["id"])
			ref.ids = append(ref.ids, id)
		}
		switch f.onDelete() {
		case OnDeleteRestrict:
			d.restrict = append(d.restrict, ref)
		case OnDeleteCascade:
			cascade = append(cascade, ref)
		default:
			d.clear = append(d.clear, ref)
		}
	}
	return cascade, nil
}

// surviving returns the ids of r's referring records the unlink keeps.
func (d *deletion) surviving(r reference) []int64 {
	var alive []int64
	for _, id := range r.ids {
		if !d.gone[r.f.owner][id] {
			alive = append(alive, id)
		}
	}
	return alive
}

// restricted fails when a restricting reference survives the unlink.
func (d *deletion) restricted() error {
	for _, r := range d.restrict {
		alive := d.surviving(r)
		if len(alive) == 0 {
			continue
		}
		what := "record " + joinIDs(alive) + " refers"
		if len(alive) > 1 {
			what = "records " + joinIDs(alive) + " refer"
		}
		return errorf(ErrConflict, at{r.f.owner.name, r.f.name}, "%s to the %s records being deleted, and onDelete is restrict", what, r.f.Target)
	}
	return nil
}

// clearRefs sets to null the references of records that stay.
func (w *writer) clearRefs(d *deletion) error {
	for _, r := range d.clear {
		alive := d.surviving(r)
		if len(alive) == 0 {
			continue
		}
		set, arg := idSet(w.s.db.Dialect(), alive)
		q := fmt.Sprintf(`UPDATE %q SET %q = NULL WHERE "id" IN (%s)`, Table(r.f.owner.name), r.f.name, set)
		if _, err := w.tx.Query(w.ctx, q, arg); err != nil {
			return fmt.Errorf("unlink: clear model %s field %s: %w", r.f.owner.name, r.f.name, err)
		}
	}
	return nil
}

// deleteRows deletes ids of m and the join rows on either side of them.
func (w *writer) deleteRows(m *model, ids []int64) error {
	set, arg := idSet(w.s.db.Dialect(), ids)
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

// onDelete is what unlinking f's target does to f's records. Unset, it is
// restrict for a required field (null would break it) and set null
// otherwise. An agent plugin's restrict on a model another plugin declares
// cannot block that plugin's deletions: it cascades to the agent's records
// when the field is required and clears them otherwise.
func (f *field) onDelete() OnDelete {
	od := f.OnDelete
	if od == "" {
		od = OnDeleteSetNull
		if f.Required {
			od = OnDeleteRestrict
		}
	}
	if od == OnDeleteRestrict && !f.system && f.target != nil && f.target.plugin != f.plugin {
		if f.Required {
			return OnDeleteCascade
		}
		return OnDeleteSetNull
	}
	return od
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
