package rbac

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
)

// maxCachedUsers bounds the memberships kept in memory; past it the
// cache starts over (the table stays the truth).
const maxCachedUsers = 10000

// service holds the policy and the memberships. The contributions and
// the data it was built from are kept here too, changed only under mu by
// the observers and the Admin, which rebuild the policy after each
// change; readers take the current policy without a lock.
type service struct {
	st  store
	pol atomic.Pointer[policy]

	mu         sync.Mutex
	codeGroups map[string]Group  // by contribution id
	codeAccess map[string]Access // by contribution id
	rules      map[string]Rule   // by contribution id
	dataGroups []Group
	dataAccess []Access

	memMu   sync.Mutex
	memGen  uint64
	members map[int64]*membership // by user id
}

// membership is a user's groups as the table has them (direct) and, for
// the policy pol and the admin flag, with the implied ones (all). all is
// never changed once made: readers share it.
type membership struct {
	direct  []string
	pol     *policy
	admin   bool
	all     map[string]bool
	domains ruleDomains
}

var (
	_ Service = (*service)(nil)
	_ Admin   = (*service)(nil)
)

func newService(st store) *service {
	s := &service{st: st, codeGroups: map[string]Group{}, codeAccess: map[string]Access{},
		rules: map[string]Rule{}, members: map[int64]*membership{}}
	p, _ := buildPolicy(sources{})
	s.pol.Store(p)
	return s
}

// load reads the data groups and access.
func (s *service) load(ctx context.Context) error {
	groups, err := s.st.groups(ctx)
	if err != nil {
		return err
	}
	access, err := s.st.access(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dataGroups, s.dataAccess = groups, access
	return s.rebuildLocked()
}

func (s *service) sourcesLocked() sources {
	src := sources{dataGroups: slices.Clone(s.dataGroups), dataAccess: slices.Clone(s.dataAccess)}
	for _, id := range sortedKeys(s.codeGroups) {
		src.codeGroups = append(src.codeGroups, s.codeGroups[id])
	}
	for _, id := range sortedKeys(s.codeAccess) {
		src.codeAccess = append(src.codeAccess, s.codeAccess[id])
	}
	for _, id := range sortedKeys(s.rules) {
		src.rules = append(src.rules, s.rules[id])
	}
	return src
}

func (s *service) rebuildLocked() error {
	p, err := buildPolicy(s.sourcesLocked())
	if err != nil {
		return err
	}
	s.pol.Store(p)
	return nil
}

// trialLocked builds the policy with change applied to a copy of the
// sources, without keeping it: what a validator or the Admin checks.
func (s *service) trialLocked(change func(*sources)) (*policy, error) {
	src := s.sourcesLocked()
	change(&src)
	return buildPolicy(src)
}

// OpContextOf is who the request or chat turn ctx serves is to the ORM:
// the principal's user, and admin when the principal holds the admin
// scope (an admin user's session, or an admin credential). Anonymous
// callers and credentials without admin are neither. Never sudo.
func OpContextOf(ctx context.Context) orm.OpContext {
	p := smshttp.PrincipalFrom(ctx)
	return orm.OpContext{UserID: p.UserID, Admin: p.Authenticated && p.Has(smshttp.ScopeAdmin)}
}

// groupsFor is every group of a user, implied ones included, from the
// cache when it was made for the same policy. The map is shared: never
// change it.
func (s *service) groupsFor(ctx context.Context, p *policy, userID int64, admin bool) (map[string]bool, error) {
	m, err := s.membershipOf(ctx, p, userID, admin)
	if err != nil {
		return nil, err
	}
	return m.all, nil
}

// membershipOf is a user's membership under policy p, from the cache when
// it was made for the same policy; a principal without a user gets a new
// one each time.
func (s *service) membershipOf(ctx context.Context, p *policy, userID int64, admin bool) (*membership, error) {
	if userID == 0 {
		var direct []string
		if admin {
			direct = []string{GroupAdmin}
		}
		return &membership{direct: direct, pol: p, admin: admin, all: p.closure(direct)}, nil
	}
	s.memMu.Lock()
	m, ok := s.members[userID]
	gen := s.memGen
	s.memMu.Unlock()
	if ok && m.pol == p && m.admin == admin {
		return m, nil
	}
	var direct []string
	if ok {
		direct = m.direct
	} else {
		var err error
		if direct, err = s.st.groupsOf(ctx, userID); err != nil {
			return nil, err
		}
	}
	all := append(slices.Clone(direct), GroupUser)
	if admin {
		all = append(all, GroupAdmin)
	}
	m = &membership{direct: direct, pol: p, admin: admin, all: p.closure(all)}
	s.memMu.Lock()
	defer s.memMu.Unlock()
	if s.memGen == gen {
		if len(s.members) >= maxCachedUsers {
			s.members = map[int64]*membership{}
		}
		s.members[userID] = m
	}
	return m, nil
}

// forget drops the cached memberships (of one user, or all when 0).
func (s *service) forget(userID int64) {
	s.memMu.Lock()
	defer s.memMu.Unlock()
	s.memGen++
	if userID == 0 {
		s.members = map[int64]*membership{}
		return
	}
	delete(s.members, userID)
}

func anonymous(q Query) error {
	if q.UserID == 0 && !q.Admin {
		return fmt.Errorf("%w: anonymous callers may not %s %s: sign in", ErrForbidden, q.Op, q.Model)
	}
	return nil
}

func (s *service) assert(ctx context.Context, q Query, collection bool) error {
	if err := anonymous(q); err != nil {
		return err
	}
	p := s.pol.Load()
	groups, err := s.groupsFor(ctx, p, q.UserID, q.Admin)
	if err != nil {
		return err
	}
	if !p.can(groups, collection, q.Model, q.Op) {
		what := "model"
		if collection {
			what = "collection"
		}
		return fmt.Errorf("%w: none of your groups (%v) may %s %s %s", ErrForbidden, slices.Sorted(mapKeys(groups)), q.Op, what, q.Model)
	}
	return nil
}

// AssertCan implements Service.
func (s *service) AssertCan(ctx context.Context, q Query) error { return s.assert(ctx, q, false) }

// AssertCanCollection implements Service.
func (s *service) AssertCanCollection(ctx context.Context, q Query) error {
	return s.assert(ctx, q, true)
}

// RuleDomain implements Service.
func (s *service) RuleDomain(ctx context.Context, q Query) (orm.Domain, error) {
	if err := anonymous(q); err != nil {
		return nil, err
	}
	m, err := s.membershipOf(ctx, s.pol.Load(), q.UserID, q.Admin)
	if err != nil {
		return nil, err
	}
	return m.domain(q.UserID, q.Model, q.Op), nil
}

// GroupsOf implements Service.
func (s *service) GroupsOf(ctx context.Context, userID int64, admin bool) ([]string, error) {
	groups, err := s.groupsFor(ctx, s.pol.Load(), userID, admin)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(mapKeys(groups)), nil
}

// ormGuard is the ORM's guard.
type ormGuard struct{ s *service }

func (g ormGuard) Can(ctx context.Context, r orm.GuardRequest) error {
	return g.s.AssertCan(ctx, Query{UserID: r.Op.UserID, Admin: r.Op.Admin, Model: r.Model, Op: r.Action})
}

func (g ormGuard) Domain(ctx context.Context, r orm.GuardRequest) (orm.Domain, error) {
	return g.s.RuleDomain(ctx, Query{UserID: r.Op.UserID, Admin: r.Op.Admin, Model: r.Model, Op: r.Action})
}

// collectionGuard is the collections' guard: the caller is the principal
// ctx carries.
type collectionGuard struct{ s *service }

func (g collectionGuard) Can(ctx context.Context, collection, action string) error {
	op := OpContextOf(ctx)
	return g.s.AssertCanCollection(ctx, Query{UserID: op.UserID, Admin: op.Admin, Model: collection, Op: orm.Action(action)})
}
