package collections

import (
	"context"
	"errors"
	"fmt"
)

// SetGuard implements Service.
func (s *service) SetGuard(g Guard) (func(), error) {
	if g == nil {
		return nil, errors.New("collections: SetGuard needs a guard")
	}
	s.guardMu.Lock()
	defer s.guardMu.Unlock()
	if s.guard != nil {
		return nil, errors.New("collections: a guard is already set; remove it first")
	}
	s.guard, s.guardSeq = g, s.guardSeq+1
	seq := s.guardSeq
	return func() {
		s.guardMu.Lock()
		defer s.guardMu.Unlock()
		if s.guardSeq == seq {
			s.guard = nil
		}
	}, nil
}

// allow asks the guard whether the caller ctx carries may do action to
// the collection name; without a guard it allows, unless one is required.
func (s *service) allow(ctx context.Context, name, action string) error {
	s.guardMu.RLock()
	g := s.guard
	s.guardMu.RUnlock()
	if g == nil {
		if s.requireGuard {
			return fmt.Errorf("%w: %s of collection %s refused: no access control is active", ErrForbidden, action, name)
		}
		return nil
	}
	if err := g.Can(ctx, name, action); err != nil {
		return fmt.Errorf("%w: %s of collection %s refused: %w", ErrForbidden, action, name, err)
	}
	return nil
}
