package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sms-baseline/sms/ledger"
)

// SQLSTATE codes the store branches on.
const (
	// codeImmutable is raised by the trigger that guards a claimed plan.
	codeImmutable       = "LDG01"
	codeCheckViolation  = "23514"
	codeUniqueViolation = "23505"
)

// mapError translates the schema's refusals into the ledger's sentinel
// errors, keeping the Postgres error in the chain for errors.As.
func mapError(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	var sentinel error
	switch pgErr.Code {
	case codeImmutable:
		sentinel = ledger.ErrPlanImmutable
	case codeCheckViolation:
		sentinel = checkSentinel(pgErr.ConstraintName)
	case codeUniqueViolation:
		// A step index recorded twice. Duplicate claims never get here: the
		// insert skips them on conflict.
		if pgErr.ConstraintName == "steps_pkey" {
			sentinel = ledger.ErrConflict
		}
	}
	if sentinel == nil {
		return err
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}

func checkSentinel(constraint string) error {
	switch constraint {
	case "runs_halt_has_reason", "runs_reason_only_when_halted":
		return ledger.ErrInvalidEnding
	case "steps_failure_has_reason":
		return ledger.ErrMissingFailureReason
	}
	return ledger.ErrInvalidRun
}
