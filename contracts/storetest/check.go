package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

func mustExec(t *testing.T, db contracts.Querier, sql string) {
	t.Helper()
	if err := db.Exec(context.Background(), sql); err != nil {
		t.Fatalf("Exec(%q): %v", sql, err)
	}
}

func mustQuery(t *testing.T, db contracts.Querier, sql string, args ...any) []contracts.Row {
	t.Helper()
	rows, err := db.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("Query(%q, %v): %v", sql, args, err)
	}
	return rows
}

func wantColumns(t *testing.T, db contracts.Querier, table string, want ...string) {
	t.Helper()
	got, err := db.Columns(context.Background(), table)
	if err != nil {
		t.Fatalf("Columns(%s): %v", table, err)
	}
	if !equal(got, want) {
		t.Fatalf("Columns(%s) = %v, want %v", table, got, want)
	}
}

func quote(t *testing.T, name string) string {
	t.Helper()
	q, err := contracts.QuoteIdent(name)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func equal[T comparable](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b))
}

func int64s(rows []contracts.Row, col string) []int64 {
	out := []int64{}
	for _, r := range rows {
		n, _ := r[col].(int64)
		out = append(out, n)
	}
	return out
}

// typed formats a row with the Go type of every value, sorted by column.
func typed(r contracts.Row) string {
	parts := []string{}
	for _, col := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, fmt.Sprintf("%s=%v (%T)", col, r[col], r[col]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func typedRows(rows []contracts.Row) string {
	parts := []string{}
	for _, r := range rows {
		parts = append(parts, typed(r))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
