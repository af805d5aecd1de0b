package orm

// maxGuardClauses bounds the compiled guard domains a service keeps; past
// it the cache starts again empty.
const maxGuardClauses = 4096

// clauseKey names one domain value a guard returned, for one model and
// action: its first element's address and its length. The cache holds the
// domain, so the address cannot be reused by another value meanwhile.
type clauseKey struct {
	m      *model
	action Action
	head   *any
	n      int
}

// guardClause is a guard's domain compiled to SQL at alias t0; where is
// empty for a domain that selects everything.
type guardClause struct {
	gd    Domain
	where string
	args  []any
}

// guardClause compiles the guard's domain gd for m, continuing the aliases
// and joins of the caller's compiler c. A guard that hands back the same
// domain value again (rbac does, per user, model and action, until its
// policy or the user's groups change) finds it compiled: Guard.Domain's
// results are never changed after they are returned. A domain whose
// compilation crossed a relation is not kept, since its joins' aliases
// depend on the caller's domain.
func (s *service) guardClause(c *compiler, m *model, action Action, gd Domain) (guardClause, error) {
	if len(gd) == 0 {
		return guardClause{}, nil
	}
	key := clauseKey{m: m, action: action, head: &gd[0], n: len(gd)}
	s.clauseMu.Lock()
	hit, ok := s.clauses[key]
	s.clauseMu.Unlock()
	if ok {
		return hit, nil
	}
	g, err := parseDomain(gd)
	if err != nil {
		return guardClause{}, err
	}
	out := guardClause{gd: gd}
	if g != nil {
		gc := &compiler{ctx: c.ctx, svc: s, dialect: s.db.Dialect(), aliases: c.aliases, joins: c.joins}
		if out.where, err = gc.where(m, "t0", g); err != nil {
			return guardClause{}, err
		}
		out.args = gc.args
		if gc.aliases != c.aliases || gc.joins != c.joins {
			return out, nil
		}
	}
	s.clauseMu.Lock()
	defer s.clauseMu.Unlock()
	if s.clauses == nil || len(s.clauses) >= maxGuardClauses {
		s.clauses = map[clauseKey]guardClause{}
	}
	s.clauses[key] = out
	return out, nil
}
