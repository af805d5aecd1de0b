package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sms-baseline/sms/contracts"
)

// runner is what *sql.DB and *sql.Tx share.
type runner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func exec(ctx context.Context, r runner, sql string) error {
	if _, err := r.ExecContext(ctx, sql); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	return nil
}

func query(ctx context.Context, r runner, sql string, args []any) ([]contracts.Row, error) {
	return read(r.QueryContext(ctx, sql, args...))
}

// read collects what a query returned and closes it.
func read(rows *sql.Rows, err error) ([]contracts.Row, error) {
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	defer func() { _ = rows.Close() }() // rows.Err reports what matters
	out, err := collect(rows)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return out, nil
}

// collect reads every row, normalizing values to the contracts' types.
func collect(rows *sql.Rows) ([]contracts.Row, error) {
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(types))
	boolean := make([]bool, len(types))
	seen := map[string]bool{}
	for i, ct := range types {
		names[i] = ct.Name()
		if seen[names[i]] {
			return nil, fmt.Errorf("the result has two columns named %q; give them distinct names with AS", names[i])
		}
		seen[names[i]] = true
		boolean[i] = ct.DatabaseTypeName() == "BOOLEAN"
	}
	out := []contracts.Row{}
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make(contracts.Row, len(names))
		for i, v := range vals {
			if n, ok := v.(int64); ok && boolean[i] {
				v = n != 0
			}
			row[names[i]] = v
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func columns(ctx context.Context, r runner, table string) ([]string, error) {
	rows, err := query(ctx, r, `SELECT "name" FROM pragma_table_info(?) ORDER BY "cid"`, []any{table})
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	out := make([]string, 0, len(rows))
	for _, row := range rows {
		name, ok := row["name"].(string)
		if !ok {
			return nil, fmt.Errorf("columns of %s: name is %T, want string", table, row["name"])
		}
		out = append(out, name)
	}
	return out, nil
}
