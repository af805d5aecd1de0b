package orm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// Join tables of many2many fields have these two columns: the record of
// the declaring model and the record it points at.
const (
	joinSrc = "src"
	joinDst = "dst"
)

// columns are the DDL types of field kinds on one dialect.
type columns struct {
	contracts.ColumnTypes
	text string // text with a byte-order collation, so comparisons and order match on every driver
}

func columnsOf(d contracts.Dialect) (columns, error) {
	t, err := d.Types()
	if err != nil {
		return columns{}, err
	}
	c := columns{ColumnTypes: t, text: t.Text}
	if d == contracts.DialectPostgres {
		c.text = t.Text + ` COLLATE "C"`
	}
	return c, nil
}

func (c columns) of(k Kind) string {
	switch k {
	case KindInt, KindMany2One:
		return c.BigInt
	case KindFloat:
		return c.Double
	case KindBool:
		return c.Boolean
	}
	return c.text
}

// signature lists what a model's tables must have, to skip migrations
// already done.
func signature(m *model) string {
	var b strings.Builder
	for _, name := range m.names() {
		f := m.fields[name]
		if f.stored() || f.Kind == KindMany2Many && f.broken == "" {
			b.WriteString(name + ":" + string(f.Kind) + ",")
		}
	}
	return b.String()
}

// migrate brings m's table and join tables up to date additively, in one
// transaction: it creates what is missing and adds missing columns
// (writing a fixed default into rows already there). Nothing is ever
// dropped or altered, so a withdrawn model or field keeps its data.
// It returns the ownership records it wrote that were not there before.
func migrate(ctx context.Context, db contracts.Database, cols columns, m *model) ([]metaRow, error) {
	var fresh []metaRow
	err := db.Tx(ctx, func(tx contracts.Querier) error {
		fresh = nil
		return migrator{ctx: ctx, tx: tx, cols: cols, fresh: &fresh}.run(m)
	})
	return fresh, err
}

// run migrates m and records who owns its table and columns, refusing a
// field whose kind does not fit the column kept under its name.
func (mg migrator) run(m *model) error {
	table := Table(m.name)
	have, err := mg.owners(table)
	if err != nil {
		return err
	}
	for _, name := range m.names() {
		if f := m.fields[name]; f.stored() || f.Kind == KindMany2Many && f.broken == "" {
			if err := fits(f, have); err != nil {
				return err
			}
			if err := taken(f, have); err != nil {
				return err
			}
		}
	}
	if err := mg.table(m); err != nil {
		return err
	}
	if err := mg.record(have, metaRow{model: m.name, col: ""}, owner{plugin: m.plugin}); err != nil {
		return err
	}
	for _, name := range m.names() {
		f := m.fields[name]
		switch {
		case f.broken != "":
		case f.stored():
			err = mg.record(have, metaRow{model: m.name, col: name}, owner{kind: recordKind(f), plugin: f.plugin})
		case f.Kind == KindMany2Many:
			if err = mg.join(m, f); err == nil {
				err = mg.record(have, metaRow{model: m.name, col: name}, owner{kind: recordKind(f), plugin: f.plugin})
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// migrator migrates inside one transaction.
type migrator struct {
	ctx   context.Context
	tx    contracts.Querier
	cols  columns
	fresh *[]metaRow // where to note the ownership records written, if anywhere
}

func (mg migrator) table(m *model) error {
	ctx, tx, cols := mg.ctx, mg.tx, mg.cols
	table := Table(m.name)
	have, err := tx.Columns(ctx, table)
	if err != nil {
		return err
	}
	if len(have) == 0 {
		ddl := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %q ("id" %s, "created_at" %s NOT NULL, "updated_at" %s NOT NULL, "created_by" %s, "updated_by" %s)`,
			table, cols.ID, cols.text, cols.text, cols.BigInt, cols.BigInt)
		if err := tx.Exec(ctx, ddl); err != nil {
			return fmt.Errorf("create table %s: %w", table, err)
		}
	}
	for _, name := range m.names() {
		f := m.fields[name]
		if !f.stored() || slices.Contains(have, name) {
			continue
		}
		if err := mg.addColumn(table, f); err != nil {
			return err
		}
	}
	return nil
}

func (mg migrator) addColumn(table string, f *field) error {
	ctx, tx, cols := mg.ctx, mg.tx, mg.cols
	if err := contracts.CheckIdent(f.name); err != nil {
		return err
	}
	if err := tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE %q ADD COLUMN %q %s`, table, f.name, cols.of(f.Kind))); err != nil {
		return &Error{Kind: ErrInvalid, Model: f.owner.name, Field: f.name, Msg: fmt.Sprintf("add column: %v", err)}
	}
	if f.Kind == KindMany2One {
		idx := "ix_" + shortHash(table+"."+f.name)
		if err := tx.Exec(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (%q)`, idx, table, f.name)); err != nil {
			return fmt.Errorf("index %s.%s: %w", table, f.name, err)
		}
	}
	if f.Default == nil || isSpecialDefault(f.Default) {
		return nil
	}
	v, err := toArg(f.Field, f.Default)
	if err != nil {
		return err
	}
	_, err = tx.Query(ctx, fmt.Sprintf(`UPDATE %q SET %q = ? WHERE %q IS NULL`, table, f.name, f.name), v)
	return err
}

func (mg migrator) join(m *model, f *field) error {
	ctx, tx, cols := mg.ctx, mg.tx, mg.cols
	rel := JoinTable(m.name, f.name)
	if err := contracts.CheckIdent(rel); err != nil {
		return &Error{Kind: ErrInvalid, Model: m.name, Field: f.name, Msg: err.Error()}
	}
	ddl := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %q (%q %s NOT NULL, %q %s NOT NULL, PRIMARY KEY (%q, %q))`,
		rel, joinSrc, cols.BigInt, joinDst, cols.BigInt, joinSrc, joinDst)
	if err := tx.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("create join table %s: %w", rel, err)
	}
	idx := "ix_" + shortHash(rel+"."+joinDst)
	return tx.Exec(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (%q)`, idx, rel, joinDst))
}

func isSpecialDefault(v any) bool {
	return v == DefaultUID || v == DefaultNow || v == DefaultToday
}

// shortHash names an index after what it indexes, within every dialect's
// identifier length.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
