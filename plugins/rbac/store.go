package rbac

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sms-baseline/sms/contracts"
)

// The plugin's tables; the plugin is their one writer.
const (
	// GroupsTable holds the groups made over the API.
	GroupsTable = "rbac_groups"
	// AccessTable holds the access granted over the API.
	AccessTable = "rbac_access"
	// MembersTable holds who is in which group.
	MembersTable = "rbac_members"
)

type store struct{ db contracts.Database }

func (s store) migrate(ctx context.Context) error {
	t, err := s.db.Dialect().Types()
	if err != nil {
		return err
	}
	ddl := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %[1]s (name %[4]s PRIMARY KEY, implies %[4]s NOT NULL, description %[4]s NOT NULL);
	CREATE TABLE IF NOT EXISTS %[2]s (grp %[4]s NOT NULL, kind %[4]s NOT NULL, name %[4]s NOT NULL,
		r %[5]s NOT NULL, c %[5]s NOT NULL, w %[5]s NOT NULL, u %[5]s NOT NULL, PRIMARY KEY (grp, kind, name));
	CREATE TABLE IF NOT EXISTS %[3]s (grp %[4]s NOT NULL, user_id %[6]s NOT NULL, PRIMARY KEY (grp, user_id))`,
		GroupsTable, AccessTable, MembersTable, t.Text, t.Boolean, t.BigInt)
	if err := s.db.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("rbac tables: %w", err)
	}
	return nil
}

func (s store) groups(ctx context.Context) ([]Group, error) {
	rows, err := s.db.Query(ctx, `SELECT name, implies, description FROM `+GroupsTable+` ORDER BY name`)
	if err != nil {
		return nil, err
	}
	out := make([]Group, 0, len(rows))
	for _, r := range rows {
		g := Group{}
		g.Name, _ = r["name"].(string)
		g.Description, _ = r["description"].(string)
		raw, _ := r["implies"].(string)
		if err := json.Unmarshal([]byte(raw), &g.Implies); err != nil {
			return nil, fmt.Errorf("group %s: implies: %w", g.Name, err)
		}
		out = append(out, g)
	}
	return out, nil
}

func (s store) insertGroup(ctx context.Context, g Group) error {
	implies, _ := json.Marshal(append([]string{}, g.Implies...))
	_, err := s.db.Query(ctx, `INSERT INTO `+GroupsTable+` (name, implies, description) VALUES (?, ?, ?)`,
		g.Name, string(implies), g.Description)
	if errors.Is(err, contracts.ErrUnique) {
		return fmt.Errorf("%w: group %s exists", ErrConflict, g.Name)
	}
	return err
}

// deleteGroup removes a data group with its access and members.
func (s store) deleteGroup(ctx context.Context, name string) error {
	return s.db.Tx(ctx, func(tx contracts.Querier) error {
		for _, q := range []string{
			`DELETE FROM ` + AccessTable + ` WHERE grp = ?`,
			`DELETE FROM ` + MembersTable + ` WHERE grp = ?`,
			`DELETE FROM ` + GroupsTable + ` WHERE name = ?`,
		} {
			if _, err := tx.Query(ctx, q, name); err != nil {
				return err
			}
		}
		return nil
	})
}

func targetOf(a Access) (kind, name string) {
	if a.Collection != "" {
		return "collection", a.Collection
	}
	return "model", a.Model
}

func (s store) access(ctx context.Context) ([]Access, error) {
	rows, err := s.db.Query(ctx, `SELECT grp, kind, name, r, c, w, u FROM `+AccessTable+` ORDER BY grp, kind, name`)
	if err != nil {
		return nil, err
	}
	out := make([]Access, 0, len(rows))
	for _, r := range rows {
		a := Access{}
		a.Group, _ = r["grp"].(string)
		kind, _ := r["kind"].(string)
		name, _ := r["name"].(string)
		if kind == "collection" {
			a.Collection = name
		} else {
			a.Model = name
		}
		a.Read, _ = r["r"].(bool)
		a.Create, _ = r["c"].(bool)
		a.Write, _ = r["w"].(bool)
		a.Unlink, _ = r["u"].(bool)
		out = append(out, a)
	}
	return out, nil
}

func (s store) putAccess(ctx context.Context, a Access) error {
	kind, name := targetOf(a)
	_, err := s.db.Query(ctx, `INSERT INTO `+AccessTable+` (grp, kind, name, r, c, w, u) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (grp, kind, name) DO UPDATE SET r = excluded.r, c = excluded.c, w = excluded.w, u = excluded.u`,
		a.Group, kind, name, a.Read, a.Create, a.Write, a.Unlink)
	return err
}

func (s store) deleteAccess(ctx context.Context, a Access) error {
	kind, name := targetOf(a)
	_, err := s.db.Query(ctx, `DELETE FROM `+AccessTable+` WHERE grp = ? AND kind = ? AND name = ?`, a.Group, kind, name)
	return err
}

func (s store) members(ctx context.Context) (map[string][]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT grp, user_id FROM `+MembersTable+` ORDER BY grp, user_id`)
	if err != nil {
		return nil, err
	}
	out := map[string][]int64{}
	for _, r := range rows {
		g, _ := r["grp"].(string)
		id, _ := r["user_id"].(int64)
		out[g] = append(out[g], id)
	}
	return out, nil
}

func (s store) groupsOf(ctx context.Context, userID int64) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT grp FROM `+MembersTable+` WHERE user_id = ? ORDER BY grp`, userID)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i], _ = r["grp"].(string)
	}
	return out, nil
}

func (s store) addMember(ctx context.Context, group string, userID int64) error {
	_, err := s.db.Query(ctx, `INSERT INTO `+MembersTable+` (grp, user_id) VALUES (?, ?) ON CONFLICT (grp, user_id) DO NOTHING`,
		group, userID)
	return err
}

func (s store) removeMember(ctx context.Context, group string, userID int64) error {
	_, err := s.db.Query(ctx, `DELETE FROM `+MembersTable+` WHERE grp = ? AND user_id = ?`, group, userID)
	return err
}
