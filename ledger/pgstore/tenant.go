package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// TenantSetting is the Postgres setting the row-level security policies read.
const TenantSetting = "app.current_tenant"

// TxBeginner starts transactions. *pgxpool.Pool, *pgx.Conn and pgx.Tx (as a
// savepoint) satisfy it.
type TxBeginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// ErrNoTenant reports a WithTenant call without a tenant key.
var ErrNoTenant = errors.New("tenant key is required")

// WithTenant runs fn inside a transaction in which app.current_tenant is
// tenantKey, set with set_config(..., true) so it lasts only as long as the
// transaction. fn's error rolls the transaction back; otherwise it commits.
// Build the store for fn's statements with New(tx).
func WithTenant(ctx context.Context, db TxBeginner, tenantKey string, fn func(tx pgx.Tx) error) error {
	if tenantKey == "" {
		return fmt.Errorf("with tenant: %w", ErrNoTenant)
	}
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `select set_config($1, $2, true)`, TenantSetting, tenantKey); err != nil {
			return fmt.Errorf("set tenant: %w", err)
		}
		return fn(tx)
	})
	if err != nil {
		return fmt.Errorf("with tenant: %w", err)
	}
	return nil
}
