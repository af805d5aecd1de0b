package rbac

import (
	"sync"

	"github.com/sms-baseline/sms/plugins/orm"
)

// maxCachedDomains bounds the rule domains one membership keeps: one per
// model and action it was asked about.
const maxCachedDomains = 1024

// ruleDomains keeps the rule domain a membership was given for each model
// and action. Handing back the same domain value lets the ORM keep the SQL
// it compiled from it; the membership, and so this cache, is replaced when
// the policy or the user's groups change.
type ruleDomains struct {
	mu   sync.Mutex
	byOp map[string]orm.Domain
}

// domain is the rule domain for the member uid acting on model with op.
// The result is shared: never change it.
func (m *membership) domain(uid int64, model string, op orm.Action) orm.Domain {
	key := model + "\x00" + string(op)
	c := &m.domains
	c.mu.Lock()
	d, ok := c.byOp[key]
	c.mu.Unlock()
	if ok {
		return d
	}
	d = m.pol.domain(m.all, uid, model, op)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byOp == nil || len(c.byOp) >= maxCachedDomains {
		c.byOp = map[string]orm.Domain{}
	}
	c.byOp[key] = d
	return d
}
