package orm

import (
	"context"
	"fmt"
	"slices"

	"github.com/sms-baseline/sms/kernel"
)

// metaRow is one ownership record of MetaTable: a model's table (col "")
// or one of its columns, and the plugin it is recorded for.
type metaRow struct{ model, col, plugin string }

// rolledBack reports whether a contribution of v withdrawn now undoes a
// mount that never held: the fiber's activation failed (it is still
// loading), or its mount is staged and being aborted.
func rolledBack(v kernel.FiberView, ok bool) bool {
	return ok && (v.Staged || v.State == kernel.StateLoading || v.State == kernel.StateFailed)
}

// withdrawn settles the ownership records plugin's migrations wrote: when
// its mount rolled back they are deleted with it, so a model name it only
// tried to take stays free; otherwise they are kept for good.
func (s *service) withdrawn(plugin string, rollback bool) {
	s.migMu.Lock()
	defer s.migMu.Unlock()
	var undo []metaRow
	s.fresh = slices.DeleteFunc(s.fresh, func(r metaRow) bool {
		if r.plugin != plugin {
			return false
		}
		undo = append(undo, r)
		return true
	})
	if !rollback || len(undo) == 0 {
		return
	}
	if err := s.forget(undo); err != nil {
		s.logger.Error("ORM ownership of a rolled-back mount kept", "plugin", plugin, "error", err)
	}
}

// forget deletes ownership records, and what the service remembers of
// the migrations that wrote them, so the next migration records anew.
// The caller holds migMu.
func (s *service) forget(rows []metaRow) error {
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()
	q := fmt.Sprintf(`DELETE FROM %q WHERE "tbl" = ? AND "col" = ? AND "plugin" = ?`, MetaTable)
	for _, r := range rows {
		delete(s.migrated, r.model)
		if _, err := s.db.Query(ctx, q, Table(r.model), r.col, r.plugin); err != nil {
			return fmt.Errorf("forget %s.%s of plugin %s: %w", Table(r.model), r.col, r.plugin, err)
		}
	}
	return nil
}
