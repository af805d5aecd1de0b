package orm

import (
	"context"
	"errors"
	"fmt"
)

// Can implements Guard.
func (g GuardFuncs) Can(ctx context.Context, r GuardRequest) error {
	if g.CanFunc == nil {
		return nil
	}
	return g.CanFunc(ctx, r)
}

// Domain implements Guard.
func (g GuardFuncs) Domain(ctx context.Context, r GuardRequest) (Domain, error) {
	if g.DomainFunc == nil {
		return nil, nil
	}
	return g.DomainFunc(ctx, r)
}

// currentGuard returns the guard, or nil.
func (s *service) currentGuard() Guard {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.guard
}

func (s *service) SetGuard(g Guard) (func(), error) {
	if g == nil {
		return nil, errors.New("orm: SetGuard needs a guard")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.guard != nil {
		return nil, errors.New("orm: a guard is already set; remove it first")
	}
	s.guard, s.guardSeq = g, s.guardSeq+1
	seq := s.guardSeq
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.guardSeq == seq {
			s.guard = nil
		}
	}, nil
}

// admit asks the guard whether op may do action on model and returns the
// domain it narrows the action to. Sudo skips the guard.
func (s *service) admit(ctx context.Context, op OpContext, model string, action Action) (Domain, error) {
	g := s.currentGuard()
	if op.Sudo {
		return nil, nil
	}
	if g == nil {
		if s.requireGuard {
			return nil, &Error{Kind: ErrForbidden, Model: model, Msg: fmt.Sprintf("%s refused: no access control is active", action)}
		}
		return nil, nil
	}
	req := GuardRequest{Op: op, Model: model, Action: action}
	if err := g.Can(ctx, req); err != nil {
		return nil, &Error{Kind: ErrForbidden, Model: model, Msg: fmt.Sprintf("%s refused: %v", action, err)}
	}
	d, err := g.Domain(ctx, req)
	if err != nil {
		return nil, &Error{Kind: ErrForbidden, Model: model, Msg: fmt.Sprintf("%s refused: %v", action, err)}
	}
	return d, nil
}

// guardDomain is admit for a model a domain path enters, acting for ctx.
func (s *service) guardDomain(ctx context.Context, model string, action Action) (Domain, error) {
	return s.admit(ctx, s.opOf(ctx), model, action)
}

// filter compiles the WHERE clause selecting m's records at alias t0 that
// match domain and that op may act on with action.
func (s *service) filter(ctx context.Context, m *model, action Action, domain Domain) (string, []any, error) {
	op := s.opOf(ctx)
	gd, err := s.admit(ctx, op, m.name, action)
	if err != nil {
		return "", nil, err
	}
	n, err := parseDomain(domain)
	if err != nil {
		return "", nil, domainErr(m.name, err)
	}
	c := &compiler{ctx: ctx, root: m.name, svc: s, dialect: s.db.Dialect(), guarded: !op.Sudo}
	where, err := c.where(m, "t0", n)
	if err != nil {
		return "", nil, err
	}
	gc, err := s.guardClause(c, m, action, gd)
	if err != nil {
		return "", nil, fmt.Errorf("the guard's domain for %s of model %s: %w", action, m.name, err)
	}
	if gc.where != "" {
		where = "(" + where + ") AND (" + gc.where + ")"
		c.args = append(c.args, gc.args...)
	}
	if err := c.bound(where); err != nil {
		return "", nil, err
	}
	return where, c.args, nil
}

// writable fails unless the caller ctx acts for may write every record of
// ids (the guard's write permission and domain).
func (s *service) writable(ctx context.Context, model string, ids []int64) error {
	_, m, err := s.model(ctx, model)
	if err != nil {
		return err
	}
	if err := checkIDs(m, ids); err != nil {
		return err
	}
	want := uniq(ids)
	list := make([]any, 0, len(want))
	for id := range want {
		list = append(list, id)
	}
	n, err := s.count(ctx, m, ActionWrite, Domain{[]any{FieldID, "in", list}})
	if err != nil {
		return err
	}
	if n != int64(len(want)) {
		return errorf(ErrForbidden, at{m.name, ""}, "some of records %s do not exist or may not be written by this user", joinIDs(ids))
	}
	return nil
}
