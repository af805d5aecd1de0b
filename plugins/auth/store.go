package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sms-baseline/sms/contracts"
)

// The plugin's tables. The plugin is their one writer.
const (
	// UsersTable holds each user: login, password hash, admin, active.
	UsersTable = "auth_users"
	// SessionsTable holds each live session under the SHA-256 of its
	// cookie value, never the value itself.
	SessionsTable = "auth_sessions"
)

// store reads and writes the tables.
type store struct{ db contracts.Database }

func (s store) migrate(ctx context.Context) error {
	t, err := s.db.Dialect().Types()
	if err != nil {
		return err
	}
	ddl := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %[1]s (id %[3]s, login %[4]s NOT NULL UNIQUE,
		hash %[4]s NOT NULL, admin %[5]s NOT NULL, active %[5]s NOT NULL, created_at %[6]s NOT NULL);
	CREATE TABLE IF NOT EXISTS %[2]s (id %[4]s PRIMARY KEY, user_id %[6]s NOT NULL,
		created_at %[6]s NOT NULL, seen_at %[6]s NOT NULL);
	CREATE INDEX IF NOT EXISTS %[2]s_user ON %[2]s (user_id)`,
		UsersTable, SessionsTable, t.ID, t.Text, t.Boolean, t.BigInt)
	if err := s.db.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("auth tables: %w", err)
	}
	return nil
}

const userColumns = `id, login, admin, active, created_at`

func userOf(r contracts.Row) User {
	u := User{}
	u.ID, _ = r["id"].(int64)
	u.Login, _ = r["login"].(string)
	u.Admin, _ = r["admin"].(bool)
	u.Active, _ = r["active"].(bool)
	ms, _ := r["created_at"].(int64)
	u.CreatedAt = time.UnixMilli(ms).UTC()
	return u
}

// newRow is a user about to be inserted.
type newRow struct {
	login, hash string
	admin       bool
	now         time.Time
}

func (s store) insertUser(ctx context.Context, u newRow) (User, error) {
	rows, err := s.db.Query(ctx, `INSERT INTO `+UsersTable+` (login, hash, admin, active, created_at)
		VALUES (?, ?, ?, ?, ?) RETURNING `+userColumns, u.login, u.hash, u.admin, true, u.now.UnixMilli())
	if errors.Is(err, contracts.ErrUnique) {
		return User{}, fmt.Errorf("%w: a user with login %q exists", ErrConflict, u.login)
	}
	if err != nil {
		return User{}, err
	}
	return userOf(rows[0]), nil
}

// byLogin returns the user with login and their hash.
func (s store) byLogin(ctx context.Context, login string) (User, string, error) {
	rows, err := s.db.Query(ctx, `SELECT `+userColumns+`, hash FROM `+UsersTable+` WHERE login = ?`, login)
	if err != nil {
		return User{}, "", err
	}
	if len(rows) == 0 {
		return User{}, "", fmt.Errorf("%w: no user has login %q", ErrNotFound, login)
	}
	hash, _ := rows[0]["hash"].(string)
	return userOf(rows[0]), hash, nil
}

func (s store) byID(ctx context.Context, id int64) (User, error) {
	rows, err := s.db.Query(ctx, `SELECT `+userColumns+` FROM `+UsersTable+` WHERE id = ?`, id)
	if err != nil {
		return User{}, err
	}
	if len(rows) == 0 {
		return User{}, fmt.Errorf("%w: no user has id %d", ErrNotFound, id)
	}
	return userOf(rows[0]), nil
}

func (s store) list(ctx context.Context) ([]User, error) {
	rows, err := s.db.Query(ctx, `SELECT `+userColumns+` FROM `+UsersTable+` ORDER BY id`)
	if err != nil {
		return nil, err
	}
	out := make([]User, len(rows))
	for i, r := range rows {
		out[i] = userOf(r)
	}
	return out, nil
}

func (s store) setHash(ctx context.Context, id int64, hash string) error {
	_, err := s.db.Query(ctx, `UPDATE `+UsersTable+` SET hash = ? WHERE id = ?`, hash, id)
	return err
}

// setFlag sets admin or active of the user with login and returns them.
func (s store) setFlag(ctx context.Context, login, column string, value bool) (User, error) {
	if column != "admin" && column != "active" {
		return User{}, fmt.Errorf("auth: no flag %q", column)
	}
	rows, err := s.db.Query(ctx, `UPDATE `+UsersTable+` SET `+column+` = ? WHERE login = ? RETURNING `+userColumns, value, login)
	if err != nil {
		return User{}, err
	}
	if len(rows) == 0 {
		return User{}, fmt.Errorf("%w: no user has login %q", ErrNotFound, login)
	}
	return userOf(rows[0]), nil
}

// sessionRow is a stored session.
type sessionRow struct {
	userID        int64
	created, seen time.Time
}

func (s store) insertSession(ctx context.Context, id string, userID int64, now time.Time) error {
	_, err := s.db.Query(ctx, `INSERT INTO `+SessionsTable+` (id, user_id, created_at, seen_at) VALUES (?, ?, ?, ?)`,
		id, userID, now.UnixMilli(), now.UnixMilli())
	return err
}

func (s store) session(ctx context.Context, id string) (sessionRow, bool, error) {
	rows, err := s.db.Query(ctx, `SELECT user_id, created_at, seen_at FROM `+SessionsTable+` WHERE id = ?`, id)
	if err != nil || len(rows) == 0 {
		return sessionRow{}, false, err
	}
	r := sessionRow{}
	r.userID, _ = rows[0]["user_id"].(int64)
	c, _ := rows[0]["created_at"].(int64)
	sn, _ := rows[0]["seen_at"].(int64)
	r.created, r.seen = time.UnixMilli(c), time.UnixMilli(sn)
	return r, true, nil
}

func (s store) touchSession(ctx context.Context, id string, now time.Time) error {
	_, err := s.db.Query(ctx, `UPDATE `+SessionsTable+` SET seen_at = ? WHERE id = ?`, now.UnixMilli(), id)
	return err
}

func (s store) deleteSession(ctx context.Context, id string) error {
	_, err := s.db.Query(ctx, `DELETE FROM `+SessionsTable+` WHERE id = ?`, id)
	return err
}

// deleteUserSessions ends every session of a user.
func (s store) deleteUserSessions(ctx context.Context, userID int64) error {
	_, err := s.db.Query(ctx, `DELETE FROM `+SessionsTable+` WHERE user_id = ?`, userID)
	return err
}

// deleteExpired removes sessions past either expiry.
func (s store) deleteExpired(ctx context.Context, idleBefore, createdBefore time.Time) error {
	_, err := s.db.Query(ctx, `DELETE FROM `+SessionsTable+` WHERE seen_at < ? OR created_at < ?`,
		idleBefore.UnixMilli(), createdBefore.UnixMilli())
	return err
}
