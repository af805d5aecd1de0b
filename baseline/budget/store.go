package budget

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/contracts"
)

// Table keeps each period's use by scope.
const Table = "budget_usage"

// migrate creates Table when it is missing.
func migrate(ctx context.Context, db contracts.Database) error {
	t, err := db.Dialect().Types()
	if err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	ddl := `CREATE TABLE IF NOT EXISTS "` + Table + `" ("period" ` + t.Text + ` NOT NULL, "scope" ` + t.Text + ` NOT NULL, ` +
		`"tokens" ` + t.BigInt + ` NOT NULL, "cost_minor" ` + t.BigInt + ` NOT NULL, "wall_ms" ` + t.BigInt + ` NOT NULL, ` +
		`"rows_written" ` + t.BigInt + ` NOT NULL, PRIMARY KEY ("period", "scope"))`
	if err := db.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("budget: create %s: %w", Table, err)
	}
	return nil
}

// load adds what the database holds for the current period to the use
// counted so far, once per period.
func (m *Meter) load(ctx context.Context, db contracts.Database) error {
	m.mu.Lock()
	m.roll()
	period := m.period
	done := m.loaded[period]
	m.mu.Unlock()
	if done {
		return nil
	}
	rows, err := db.Query(ctx, `SELECT "scope", "tokens", "cost_minor", "wall_ms", "rows_written" FROM "`+Table+`" WHERE "period" = ?`, period)
	if err != nil {
		return fmt.Errorf("budget: load period %s: %w", period, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.period != period || m.loaded[period] {
		return nil
	}
	for _, r := range rows {
		name, _ := r["scope"].(string)
		s := parseScope(name)
		m.used[s] = add(m.used[s], contracts.Usage{Tokens: asInt(r["tokens"]), CostMinor: asInt(r["cost_minor"]),
			WallMillis: asInt(r["wall_ms"]), Rows: asInt(r["rows_written"])})
	}
	m.loaded[period] = true
	return nil
}

func asInt(v any) int64 {
	n, _ := v.(int64)
	return n
}

// flush writes the use counted since the last flush, adding it to what the
// database holds. What fails to be written is kept for the next flush.
func (m *Meter) flush(ctx context.Context, db contracts.Database) error {
	m.mu.Lock()
	dirty := m.dirty
	m.dirty = map[string]map[scope]contracts.Usage{}
	m.mu.Unlock()
	if len(dirty) == 0 {
		return nil
	}
	err := db.Tx(ctx, func(tx contracts.Querier) error {
		for period, scopes := range dirty {
			for s, u := range scopes {
				_, err := tx.Query(ctx, `INSERT INTO "`+Table+`" ("period", "scope", "tokens", "cost_minor", "wall_ms", "rows_written") `+
					`VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT ("period", "scope") DO UPDATE SET `+
					`"tokens" = "`+Table+`"."tokens" + excluded."tokens", "cost_minor" = "`+Table+`"."cost_minor" + excluded."cost_minor", `+
					`"wall_ms" = "`+Table+`"."wall_ms" + excluded."wall_ms", "rows_written" = "`+Table+`"."rows_written" + excluded."rows_written"`,
					period, s.String(), u.Tokens, u.CostMinor, u.WallMillis, u.Rows)
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		m.mu.Lock()
		for period, scopes := range dirty {
			if m.dirty[period] == nil {
				m.dirty[period] = map[scope]contracts.Usage{}
			}
			for s, u := range scopes {
				m.dirty[period][s] = add(m.dirty[period][s], u)
			}
		}
		m.mu.Unlock()
		return fmt.Errorf("budget: store use: %w", err)
	}
	return nil
}
