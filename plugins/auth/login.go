package auth

import (
	"context"
	"errors"
	"time"
)

// login checks a login and a password and opens a session: the user and
// the session's cookie value. Every failure is ErrBadLogin whatever the
// reason (no such login, wrong password, user not active), and takes the
// same time: a login nobody has is checked against a dummy hash.
func (s *service) login(ctx context.Context, login, password string) (User, string, error) {
	if err := validLogin(login); err != nil {
		return User{}, "", err
	}
	if len(password) > MaxPasswordBytes {
		return User{}, "", validPassword(password)
	}
	now := s.now()
	if err := s.thr.check(login, now); err != nil {
		return User{}, "", err
	}
	u, ok, err := s.verify(ctx, login, password)
	if err != nil {
		return User{}, "", err
	}
	if !ok {
		if wait := s.thr.fail(login, now); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		return User{}, "", ErrBadLogin
	}
	s.thr.succeed(login)
	value, err := s.sess.start(ctx, u)
	if err != nil {
		return User{}, "", err
	}
	s.sweepIfDue(ctx, now)
	return u, value, nil
}

// verify checks the password under a hashing slot and upgrades a hash
// made with other costs than the current ones.
func (s *service) verify(ctx context.Context, login, password string) (User, bool, error) {
	release, err := s.hashing()
	if err != nil {
		return User{}, false, err
	}
	defer release()
	u, stored, err := s.st.byLogin(ctx, login)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return User{}, false, err
	}
	h, perr := parseHash(stored)
	if err != nil || perr != nil {
		if perr != nil && err == nil {
			s.logger.Error("A user's stored password hash is unreadable", "login", login, "error", perr)
		}
		dummyHash(s.hash).matches(password)
		return User{}, false, nil
	}
	if !h.matches(password) || !u.Active {
		return User{}, false, nil
	}
	if h.params != s.hash {
		if hash, err := hashPassword(password, s.hash); err == nil {
			if err := s.st.setHash(ctx, u.ID, hash); err != nil {
				s.logger.Warn("Could not upgrade a password hash", "login", login, "error", err)
			}
		}
	}
	return u, true, nil
}

// sweepIfDue removes expired sessions at most once per sweepEvery.
func (s *service) sweepIfDue(ctx context.Context, now time.Time) {
	s.mu.Lock()
	due := now.Sub(s.lastSweep) >= sweepEvery
	if due {
		s.lastSweep = now
	}
	s.mu.Unlock()
	if due {
		if err := s.sess.sweep(ctx); err != nil {
			s.logger.Warn("Could not remove expired sessions", "error", err)
		}
	}
}
