package collections

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

func (s *service) List(ctx context.Context, name string, opts ListOptions) ([]Record, error) {
	def, err := s.collection(ctx, name)
	if err != nil {
		return nil, err
	}
	limit, offset, err := page(opts)
	if err != nil {
		return nil, invalidf("collection %q: %v", name, err)
	}
	where, args, err := whereSQL(def, opts.Where)
	if err != nil {
		return nil, err
	}
	sel, table, err := selectFrom(def)
	if err != nil {
		return nil, err
	}
	q := "SELECT " + sel + " FROM " + table + where + ` ORDER BY "` + ColumnID + `" LIMIT ` + strconv.Itoa(limit) + ` OFFSET ` + strconv.Itoa(offset)
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list collection %q: %w", name, err)
	}
	out := make([]Record, len(rows))
	for i, row := range rows {
		out[i] = record(def, row)
	}
	return out, nil
}

func (s *service) Get(ctx context.Context, name string, id int64) (Record, error) {
	def, err := s.collection(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.get(ctx, def, id)
}

func (s *service) get(ctx context.Context, def Collection, id int64) (Record, error) {
	sel, table, err := selectFrom(def)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, "SELECT "+sel+" FROM "+table+` WHERE "`+ColumnID+`" = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("get record %d of collection %q: %w", id, def.Name, err)
	}
	if len(rows) == 0 {
		return nil, notFoundf("collection %q has no record %d", def.Name, id)
	}
	return record(def, rows[0]), nil
}

func (s *service) Create(ctx context.Context, name string, values map[string]any) (Record, error) {
	def, err := s.collection(ctx, name)
	if err != nil {
		return nil, err
	}
	args, err := createArgs(def, values)
	if err != nil {
		return nil, err
	}
	if err := s.before(ctx, HookEvent{Collection: name, On: OpCreate, Record: preview(def, args, nil)}); err != nil {
		return nil, err
	}
	stamp := s.stamp()
	cols, vals := []string{ColumnCreatedAt, ColumnUpdatedAt}, []any{stamp, stamp}
	for _, f := range def.Fields {
		cols, vals = append(cols, f.Name), append(vals, args[f.Name])
	}
	quoted, err := quoteAll(cols)
	if err != nil {
		return nil, err
	}
	sel, table, err := selectFrom(def)
	if err != nil {
		return nil, err
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")
	q := "INSERT INTO " + table + " (" + strings.Join(quoted, ", ") + ") VALUES (" + marks + ") RETURNING " + sel
	rows, err := s.db.Query(ctx, q, vals...)
	if err != nil {
		return nil, fmt.Errorf("create record in collection %q: %w", name, err)
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("create record in collection %q: the insert returned %d rows, want 1", name, len(rows))
	}
	rec := record(def, rows[0])
	s.after(ctx, HookEvent{Collection: name, On: OpCreate, Record: rec})
	return rec, nil
}

func (s *service) Update(ctx context.Context, name string, id int64, values map[string]any) (Record, error) {
	def, err := s.collection(ctx, name)
	if err != nil {
		return nil, err
	}
	args, err := fieldArgs(def, values)
	if err != nil {
		return nil, err
	}
	var prev Record
	hooked := s.reg.hasHooks(name, OpUpdate)
	if hooked {
		if prev, err = s.get(ctx, def, id); err != nil {
			return nil, err
		}
		if err := s.before(ctx, HookEvent{Collection: name, On: OpUpdate, Record: preview(def, args, prev), Previous: prev}); err != nil {
			return nil, err
		}
	}
	cols, vals := []string{}, []any{}
	for _, f := range def.Fields {
		if v, ok := args[f.Name]; ok {
			cols, vals = append(cols, f.Name), append(vals, v)
		}
	}
	cols, vals = append(cols, ColumnUpdatedAt), append(vals, s.stamp(), id)
	quoted, err := quoteAll(cols)
	if err != nil {
		return nil, err
	}
	sel, table, err := selectFrom(def)
	if err != nil {
		return nil, err
	}
	q := "UPDATE " + table + " SET " + strings.Join(quoted, " = ?, ") + ` = ? WHERE "` + ColumnID + `" = ? RETURNING ` + sel
	rows, err := s.db.Query(ctx, q, vals...)
	if err != nil {
		return nil, fmt.Errorf("update record %d of collection %q: %w", id, name, err)
	}
	if len(rows) == 0 {
		return nil, notFoundf("collection %q has no record %d", name, id)
	}
	rec := record(def, rows[0])
	if hooked {
		s.after(ctx, HookEvent{Collection: name, On: OpUpdate, Record: rec, Previous: prev})
	}
	return rec, nil
}

func (s *service) Delete(ctx context.Context, name string, id int64) error {
	def, err := s.collection(ctx, name)
	if err != nil {
		return err
	}
	var prev Record
	hooked := s.reg.hasHooks(name, OpDelete)
	if hooked {
		if prev, err = s.get(ctx, def, id); err != nil {
			return err
		}
		if err := s.before(ctx, HookEvent{Collection: name, On: OpDelete, Previous: prev}); err != nil {
			return err
		}
	}
	table, err := contracts.QuoteIdent(Table(def.Name))
	if err != nil {
		return err
	}
	rows, err := s.db.Query(ctx, "DELETE FROM "+table+` WHERE "`+ColumnID+`" = ? RETURNING "`+ColumnID+`"`, id)
	if err != nil {
		return fmt.Errorf("delete record %d of collection %q: %w", id, name, err)
	}
	if len(rows) == 0 {
		return notFoundf("collection %q has no record %d", name, id)
	}
	if hooked {
		s.after(ctx, HookEvent{Collection: name, On: OpDelete, Previous: prev})
	}
	return nil
}

// fieldArgs checks values against def and converts them to column
// arguments. Every problem is reported, each naming its field.
func fieldArgs(def Collection, values map[string]any) (map[string]any, error) {
	out, problems := convert(def, values)
	return out, problemsErr(def, problems)
}

// convert converts the values it can and lists the problems of the others.
func convert(def Collection, values map[string]any) (map[string]any, []string) {
	byName := make(map[string]Field, len(def.Fields))
	for _, f := range def.Fields {
		byName[f.Name] = f
	}
	out := make(map[string]any, len(values))
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		f, ok := byName[k]
		switch {
		case isSystemColumn(k):
			problems = append(problems, fmt.Sprintf("field %q is set by the collection and cannot be written", k))
		case !ok:
			problems = append(problems, fmt.Sprintf("there is no field %q", k))
		default:
			arg, err := toArg(f, values[k])
			switch {
			case err != nil:
				problems = append(problems, err.Error())
			case arg == nil && f.Required:
				problems = append(problems, fmt.Sprintf("field %q is required", k))
			default:
				out[k] = arg
			}
		}
	}
	return out, problems
}

func problemsErr(def Collection, problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return invalidf("collection %q: %s", def.Name, strings.Join(problems, "; "))
}

// createArgs is fieldArgs plus defaults for missing fields and the check
// that every required field ends up with a value.
func createArgs(def Collection, values map[string]any) (map[string]any, error) {
	out, problems := convert(def, values)
	for _, f := range def.Fields {
		if _, given := values[f.Name]; !given && f.Default != nil {
			v, err := toArg(f, f.Default)
			if err != nil {
				return nil, invalidf("collection %q: default of %v", def.Name, err)
			}
			out[f.Name] = v
		}
		if _, given := values[f.Name]; !given && out[f.Name] == nil && f.Required {
			problems = append(problems, fmt.Sprintf("field %q is required", f.Name))
		}
	}
	if err := problemsErr(def, problems); err != nil {
		return nil, err
	}
	return out, nil
}

// preview is the record a before hook sees: base (the stored record, for an
// update) with the new values applied, as they will read back.
func preview(def Collection, args map[string]any, base Record) Record {
	rec := maps.Clone(base)
	if rec == nil {
		rec = Record{}
	}
	for _, f := range def.Fields {
		if v, ok := args[f.Name]; ok {
			rec[f.Name] = fromColumn(f, v)
		}
	}
	return rec
}

// whereSQL turns equality filters into a WHERE clause with bound
// arguments; null matches null. Keys are the fields and the id and time
// columns; JSON fields cannot be filtered on.
func whereSQL(def Collection, where map[string]any) (string, []any, error) {
	if len(where) == 0 {
		return "", nil, nil
	}
	fields := append([]Field{{Name: ColumnID, Type: TypeInteger}, {Name: ColumnCreatedAt, Type: TypeText},
		{Name: ColumnUpdatedAt, Type: TypeText}}, def.Fields...)
	var conds []string
	var args []any
	for _, k := range slices.Sorted(maps.Keys(where)) {
		i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == k })
		if i < 0 {
			return "", nil, invalidf("collection %q: where: there is no field %q", def.Name, k)
		}
		if fields[i].Type == TypeJSON {
			return "", nil, invalidf("collection %q: where: field %q holds JSON and cannot be filtered on", def.Name, k)
		}
		col, err := contracts.QuoteIdent(k)
		if err != nil {
			return "", nil, err
		}
		arg, err := toArg(fields[i], where[k])
		switch {
		case err != nil:
			return "", nil, invalidf("collection %q: where: %v", def.Name, err)
		case arg == nil:
			conds = append(conds, col+" IS NULL")
		default:
			conds, args = append(conds, col+" = ?"), append(args, arg)
		}
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

func page(opts ListOptions) (limit, offset int, err error) {
	limit = opts.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 0 || limit > MaxLimit {
		return 0, 0, fmt.Errorf("limit %d must be between 1 and %d", opts.Limit, MaxLimit)
	}
	if opts.Offset < 0 {
		return 0, 0, fmt.Errorf("offset %d must not be negative", opts.Offset)
	}
	return limit, opts.Offset, nil
}

// selectFrom returns the quoted column list of def and its quoted table.
func selectFrom(def Collection) (string, string, error) {
	cols := []string{ColumnID, ColumnCreatedAt, ColumnUpdatedAt}
	for _, f := range def.Fields {
		cols = append(cols, f.Name)
	}
	quoted, err := quoteAll(cols)
	if err != nil {
		return "", "", err
	}
	table, err := contracts.QuoteIdent(Table(def.Name))
	if err != nil {
		return "", "", err
	}
	return strings.Join(quoted, ", "), table, nil
}

func quoteAll(names []string) ([]string, error) {
	out := make([]string, len(names))
	for i, n := range names {
		q, err := contracts.QuoteIdent(n)
		if err != nil {
			return nil, fmt.Errorf("collections: %w", err)
		}
		out[i] = q
	}
	return out, nil
}
