package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"sync"
	"time"
)

// Session cookie values are 32 random bytes, base64url without padding.
const (
	cookieValueBytes = 32
	cookieValueLen   = 43
	// maxCachedSessions bounds the sessions kept in memory; past it the
	// cache starts over (the table stays the truth).
	maxCachedSessions = 10000
	// touchEvery is how stale seen_at may get in the table: the idle
	// expiry is this much less exact than the cache's own.
	touchEvery = time.Minute
	// seenEvery is how stale the cache's last use of a session may get:
	// requests closer together than this record nothing.
	seenEvery = time.Second
)

// sessions are the live sessions: the table owns them; the cache is this
// kernel's view of it, dropped by the same code that changes the table.
// gen counts those drops, so a lookup that read the table before one
// does not put back what it dropped.
type sessions struct {
	st           store
	now          func() time.Time
	idle, maxAge time.Duration

	mu    sync.Mutex
	gen   uint64
	cache map[string]*cachedSession // by session id
}

type cachedSession struct {
	user          User
	created, seen time.Time
	touched       time.Time // last seen_at written
}

func newSessions(st store, opts Options) *sessions {
	return &sessions{st: st, now: opts.Now, idle: opts.IdleTimeout, maxAge: opts.MaxAge, cache: map[string]*cachedSession{}}
}

// sessionID is what the table keys a cookie value by.
func sessionID(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}

// wellFormed reports whether v could be a cookie value this plugin made,
// before any hashing or lookup.
func wellFormed(v string) bool {
	if len(v) != cookieValueLen {
		return false
	}
	for _, c := range []byte(v) {
		if !base64URL(c) {
			return false
		}
	}
	return true
}

// base64URL reports whether c is in the URL-safe base64 alphabet.
func base64URL(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// start opens a session for u and returns its cookie value.
func (s *sessions) start(ctx context.Context, u User) (string, error) {
	raw := make([]byte, cookieValueBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	value := base64.RawURLEncoding.EncodeToString(raw)
	now := s.now()
	if err := s.st.insertSession(ctx, sessionID(value), u.ID, now); err != nil {
		return "", err
	}
	return value, nil
}

// user returns the active user whose session value is, or false.
func (s *sessions) user(ctx context.Context, value string) (User, bool) {
	if !wellFormed(value) {
		return User{}, false
	}
	id, now := sessionID(value), s.now()
	s.mu.Lock()
	cached, hit := s.cache[id]
	var c cachedSession
	if hit {
		c = *cached
	}
	gen := s.gen
	s.mu.Unlock()
	if !hit {
		var ok bool
		var err error
		if c, ok, err = s.load(ctx, id); err != nil || !ok {
			return User{}, false
		}
	}
	if now.Sub(c.seen) > s.idle || now.Sub(c.created) > s.maxAge {
		_ = s.end(ctx, value)
		return User{}, false
	}
	if hit && now.Sub(c.seen) < seenEvery {
		return c.user, true // seen a moment ago: nothing to record
	}
	c.seen = now
	touch := now.Sub(c.touched) >= touchEvery
	if touch {
		c.touched = now
	}
	s.mu.Lock()
	if s.gen != gen {
		s.mu.Unlock()
		return User{}, false // a revocation ran meanwhile
	}
	if len(s.cache) >= maxCachedSessions {
		s.cache = map[string]*cachedSession{}
	}
	s.cache[id] = &c
	s.mu.Unlock()
	if touch {
		// The idle expiry survives a restart to within touchEvery.
		_ = s.st.touchSession(context.WithoutCancel(ctx), id, now)
	}
	return c.user, true
}

// load reads a session and its user from the tables; a session of a
// user not active does not count.
func (s *sessions) load(ctx context.Context, id string) (cachedSession, bool, error) {
	row, ok, err := s.st.session(ctx, id)
	if err != nil || !ok {
		return cachedSession{}, false, err
	}
	u, err := s.st.byID(ctx, row.userID)
	if err != nil || !u.Active {
		return cachedSession{}, false, err
	}
	return cachedSession{user: u, created: row.created, seen: row.seen, touched: row.seen}, true, nil
}

// end ends the session whose cookie value is value.
func (s *sessions) end(ctx context.Context, value string) error {
	id := sessionID(value)
	s.mu.Lock()
	s.gen++
	delete(s.cache, id)
	s.mu.Unlock()
	return s.st.deleteSession(ctx, id)
}

// forget drops the cached sessions of a user, so that the next request
// reads them (and the user) again from the tables.
func (s *sessions) forget(userID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	for id, c := range s.cache {
		if c.user.ID == userID {
			delete(s.cache, id)
		}
	}
}

// revoke ends every session of a user.
func (s *sessions) revoke(ctx context.Context, userID int64) error {
	s.forget(userID)
	err := s.st.deleteUserSessions(ctx, userID)
	s.forget(userID) // a lookup that read the table before the delete
	return err
}

// sweep removes expired sessions from the table.
func (s *sessions) sweep(ctx context.Context) error {
	now := s.now()
	return s.st.deleteExpired(ctx, now.Add(-s.idle-touchEvery), now.Add(-s.maxAge))
}
