package agentloop

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sms-baseline/sms/contracts"
)

// SessionsTable keeps transcripts for DatabaseSessions.
const SessionsTable = "agent_sessions"

// dbSessions is a SessionStore on a contracts.Database.
type dbSessions struct{ db contracts.Database }

// DatabaseSessions returns a SessionStore keeping each transcript as JSON
// in SessionsTable of db, created when first needed.
func DatabaseSessions(db contracts.Database) SessionStore { return &dbSessions{db: db} }

func (d *dbSessions) ensure(ctx context.Context) error {
	types, err := d.db.Dialect().Types()
	if err != nil {
		return err
	}
	return d.db.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+SessionsTable+` (session `+types.Text+
		` PRIMARY KEY, history `+types.Text+` NOT NULL)`)
}

// Load implements SessionStore.
func (d *dbSessions) Load(ctx context.Context, session string) ([]contracts.Message, error) {
	if err := d.ensure(ctx); err != nil {
		return nil, fmt.Errorf("sessions table: %w", err)
	}
	rows, err := d.db.Query(ctx, `SELECT history FROM `+SessionsTable+` WHERE session = ?`, session)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	raw, _ := rows[0]["history"].(string)
	var history []contracts.Message
	if err := json.Unmarshal([]byte(raw), &history); err != nil {
		return nil, fmt.Errorf("decode transcript: %w", err)
	}
	return history, nil
}

// Save implements SessionStore.
func (d *dbSessions) Save(ctx context.Context, session string, history []contracts.Message) error {
	if err := d.ensure(ctx); err != nil {
		return fmt.Errorf("sessions table: %w", err)
	}
	raw, err := json.Marshal(history)
	if err != nil {
		return fmt.Errorf("encode transcript: %w", err)
	}
	_, err = d.db.Query(ctx, `INSERT INTO `+SessionsTable+` (session, history) VALUES (?, ?)
		ON CONFLICT (session) DO UPDATE SET history = excluded.history`, session, string(raw))
	return err
}
