package orm

// The operation context's keys and the tables' names: what contract.go
// declares uses them, and no other plugin needs them.

import "context"

type opKey struct{}

type sudoKey struct{}

// sudoFrom reports whether Sudo applies to ctx.
func sudoFrom(ctx context.Context) bool {
	s, _ := ctx.Value(sudoKey{}).(bool)
	return s
}

// TablePrefix is prepended to a model's name to form its table name.
const TablePrefix = "m_"

// Table returns the table name of a model.
func Table(model string) string { return TablePrefix + model }

// OpFrom returns the OpContext ctx carries, with Sudo when Sudo(ctx) was
// applied, and whether it carries one. Without one the ORM asks its
// ContextOf.
func OpFrom(ctx context.Context) (OpContext, bool) {
	op, ok := ctx.Value(opKey{}).(OpContext)
	op.Sudo, _ = ctx.Value(sudoKey{}).(bool)
	return op, ok
}

// JoinTable returns the join table of a many2many field: r_ and a hash of
// the model and field names. Names joined with _ could collide (invoice's
// tag_ids and invoice_tag's ids), and a plugin never names the table, so
// no field can point its links at another field's table.
func JoinTable(model, field string) string { return "r_" + shortHash(model+"."+field) }
