package orm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// MetaTable records who created each ORM table and column and of which
// kind: tbl, col ("" for the table itself), kind and plugin. It outlives
// the contributions, so a withdrawn model's table and a withdrawn field's
// column keep their owner.
const MetaTable = "orm_columns"

func (s *service) createMeta(ctx context.Context) error {
	ddl := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %q ("tbl" %s NOT NULL, "col" %s NOT NULL, "kind" %s NOT NULL, "plugin" %s NOT NULL, PRIMARY KEY ("tbl", "col"))`,
		MetaTable, s.cols.text, s.cols.text, s.cols.text, s.cols.text)
	if err := s.db.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("orm: create %s: %w", MetaTable, err)
	}
	return nil
}

// storage is the class of values a column of kind k holds; a field may
// reuse a kept column only of its own class.
func storage(k Kind) string {
	switch k {
	case KindInt, KindMany2One:
		return "integer"
	case KindFloat:
		return "real"
	case KindBool:
		return "boolean"
	case KindMany2Many:
		return "links"
	}
	return "text"
}

// owner is one row of MetaTable.
type owner struct{ kind, plugin string }

// owners reads the recorded owners of table's columns.
func (mg migrator) owners(table string) (map[string]owner, error) {
	rows, err := mg.tx.Query(mg.ctx, fmt.Sprintf(`SELECT "col", "kind", "plugin" FROM %q WHERE "tbl" = ?`, MetaTable), table)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", MetaTable, err)
	}
	out := make(map[string]owner, len(rows))
	for _, r := range rows {
		col, _ := r["col"].(string)
		kind, _ := r["kind"].(string)
		plugin, _ := r["plugin"].(string)
		out[col] = owner{kind: kind, plugin: plugin}
	}
	return out, nil
}

// record notes an owner unless one is recorded already (in have, the
// records read when the migration began), noting the ones it adds.
func (mg migrator) record(have map[string]owner, r metaRow, o owner) error {
	table := Table(r.model)
	q := fmt.Sprintf(`INSERT INTO %q ("tbl", "col", "kind", "plugin") VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, MetaTable)
	if _, err := mg.tx.Query(mg.ctx, q, table, r.col, o.kind, o.plugin); err != nil {
		return fmt.Errorf("record %s.%s in %s: %w", table, r.col, MetaTable, err)
	}
	if _, had := have[r.col]; !had && mg.fresh != nil {
		r.plugin = o.plugin
		*mg.fresh = append(*mg.fresh, r)
	}
	return nil
}

// recordKind is what MetaTable records of a field's kind: the kind, and
// for a relation the model its ids are of.
func recordKind(f *field) string {
	if f.Kind == KindMany2One || f.Kind == KindMany2Many {
		return string(f.Kind) + ">" + f.Target
	}
	return string(f.Kind)
}

// holds is the class of what a recorded kind's column holds: the storage
// class, and for a relation its target, so ids are never read as another
// model's.
func holds(kind string) string {
	k, target, rel := strings.Cut(kind, ">")
	if rel {
		return storage(Kind(k)) + ">" + target
	}
	return storage(Kind(k))
}

// fits checks that f may use the column (or join table) kept under its
// name: holding the same class of values, and ids of the same model.
func fits(f *field, have map[string]owner) error {
	o, ok := have[f.name]
	if !ok || holds(o.kind) == holds(recordKind(f)) {
		return nil
	}
	return errorf(ErrInvalid, at{f.owner.name, f.name}, "the column kept from plugin %s holds %s values; a %s field cannot reuse it",
		o.plugin, o.kind, recordKind(f))
}

// taken refuses an agent plugin's field on a column another plugin made,
// whichever order the contributions came in.
func taken(f *field, have map[string]owner) error {
	if o, ok := have[f.name]; ok && !f.system && o.plugin != f.plugin {
		return errorf(ErrInvalid, at{f.owner.name, f.name}, "the column was created by plugin %s; an agent plugin may not take it over", o.plugin)
	}
	return nil
}

// claim is what a contribution asks of the tables, for its plugin.
type claim struct {
	plugin string
	system bool
	table  bool     // declares the model, so takes its table
	fields []string // the fields it contributes
}

// check refuses an agent plugin's claim on a table or column another
// plugin created: a model or field withdrawn from its plugin keeps its
// data, and a later agent plugin taking its name does not get that data.
// System plugins, installed by the application, may take them.
func (c claim) check(m *model, have map[string]owner) error {
	if c.system {
		return nil
	}
	if t, ok := have[""]; ok && c.table && t.plugin != c.plugin {
		return errorf(ErrInvalid, at{m.name, ""}, "table %s was created by plugin %s; an agent plugin may not take it over", Table(m.name), t.plugin)
	}
	for _, name := range c.fields {
		if o, ok := have[name]; ok && o.plugin != c.plugin {
			return errorf(ErrInvalid, at{m.name, name}, "the column was created by plugin %s; an agent plugin may not take it over", o.plugin)
		}
	}
	return nil
}

// checkKept checks a claim on the tables of a model not declared now.
func (s *service) checkKept(name string, c claim) error {
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()
	have, err := migrator{ctx: ctx, tx: s.db, cols: s.cols}.owners(Table(name))
	if err != nil {
		return err
	}
	return c.check(&model{name: name}, have)
}

// errDryRun rolls back a migration made only to see whether it works.
var errDryRun = errors.New("orm: dry run")

// tryMigrate checks a contribution by migrating the model as it would be
// with it, in a transaction that is always rolled back: nothing changes
// until the contribution is accepted (a plugin the judge is only trying
// leaves no column behind).
func (s *service) tryMigrate(m *model, c claim) error {
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()
	err := s.db.Tx(ctx, func(tx contracts.Querier) error {
		mg := migrator{ctx: ctx, tx: tx, cols: s.cols}
		have, err := mg.owners(Table(m.name))
		if err != nil {
			return err
		}
		if err := c.check(m, have); err != nil {
			return err
		}
		if err := mg.run(m); err != nil {
			return err
		}
		return errDryRun
	})
	if errors.Is(err, errDryRun) {
		return nil
	}
	return err
}
