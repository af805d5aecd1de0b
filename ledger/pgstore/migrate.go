package pgstore

import (
	"context"
	"fmt"
	"io/fs"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/sms-baseline/sms/ledger/migrations"
)

// Migrate applies every embedded migration in name order. Each file runs as
// one implicit transaction and is safe to apply again, so Migrate may run on
// every start.
func Migrate(ctx context.Context, db DB) error {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		sql, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		// Without arguments, pgx sends the file with the simple protocol,
		// which runs its statements in one implicit transaction.
		if _, err := db.Exec(ctx, string(sql)); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", name, err)
		}
	}
	return nil
}

// Check is one row of ledger.verify_install().
type Check struct {
	// Name says what is checked, such as "row-level security forced".
	Name string
	// OK is true when the schema has it.
	OK bool
	// Detail names the objects involved.
	Detail string
}

// VerifyInstall runs ledger.verify_install() and returns its rows; every
// Check must have OK set for the schema to keep the ledger's guarantees.
func VerifyInstall(ctx context.Context, db DB) ([]Check, error) {
	rows, err := db.Query(ctx, `select check_name, ok, detail from ledger.verify_install()`)
	if err != nil {
		return nil, fmt.Errorf("verify install: %w", err)
	}
	checks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Check, error) {
		var c Check
		err := row.Scan(&c.Name, &c.OK, &c.Detail)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("verify install: %w", err)
	}
	return checks, nil
}
