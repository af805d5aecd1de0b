package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/store/sqlstore"
)

// runner is what a pool and a transaction share.
type runner interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// exec runs SQL without arguments; pgx then uses the simple protocol, which
// accepts several statements.
func exec(ctx context.Context, r runner, sql string) error {
	if _, err := r.Exec(ctx, sql); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	return nil
}

func query(ctx context.Context, r runner, sql string, args []any) ([]contracts.Row, error) {
	numbered, n := sqlstore.NumberPlaceholders(sql)
	if n != len(args) {
		return nil, fmt.Errorf("query: %d placeholders but %d arguments", n, len(args))
	}
	rows, err := r.Query(ctx, numbered, args...)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	out, err := collect(rows)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return out, nil
}

func collect(rows pgx.Rows) ([]contracts.Row, error) {
	fields := rows.FieldDescriptions()
	names := make([]string, len(fields))
	seen := map[string]bool{}
	for i, f := range fields {
		if seen[f.Name] {
			return nil, fmt.Errorf("the result has two columns named %q; give them distinct names with AS", f.Name)
		}
		seen[f.Name] = true
		names[i] = f.Name
	}
	out := []contracts.Row{}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		row := make(contracts.Row, len(names))
		for i, v := range vals {
			if row[names[i]], err = normalize(v); err != nil {
				return nil, fmt.Errorf("column %s: %w", names[i], err)
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// normalize maps pgx's Go types onto the contracts' ones.
func normalize(v any) (any, error) {
	switch x := v.(type) {
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float32:
		return float64(x), nil
	case pgtype.Numeric:
		f, err := x.Float64Value() // NULL never gets here: pgx returns nil
		if err != nil {
			return nil, err
		}
		return f.Float64, nil
	}
	return v, nil
}

func columns(ctx context.Context, r runner, table string) ([]string, error) {
	rows, err := query(ctx, r, `SELECT column_name::text AS name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`, []any{table})
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

// SQLSTATE codes the driver acts on.
const (
	uniqueViolation    = "23505"
	duplicateSchema    = "42P06"
	featureUnsupported = "0A000" // includes "cached plan must not change result type"
)

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// isStalePlan reports the error Postgres raises when a prepared statement's
// result columns changed under it; the statement did not run.
func isStalePlan(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == featureUnsupported && strings.Contains(pe.Message, "cached plan")
}

// mapError maps pgx errors onto the contracts' sentinels.
func mapError(ctx context.Context, err error, closed bool) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	if closed && !errors.Is(err, contracts.ErrClosed) {
		return fmt.Errorf("%w: %w", contracts.ErrClosed, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == uniqueViolation {
		return fmt.Errorf("%w: %w", contracts.ErrUnique, err)
	}
	return err
}
