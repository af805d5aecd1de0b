package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// sweepEvery is how often a login also removes expired sessions.
const sweepEvery = time.Hour

// service is the plugin's state: the Identity, the Admin and the logins.
type service struct {
	st        store
	sess      *sessions
	thr       *throttle
	hash      HashParams
	slots     chan struct{} // password hashes running
	now       func() time.Time
	noApprove bool
	secure    bool
	logger    *slog.Logger

	mu        sync.Mutex // serializes changes to admin and active
	lastSweep time.Time
}

var (
	_ Identity = (*service)(nil)
	_ Admin    = (*service)(nil)
)

func newService(st store, opts Options, logger *slog.Logger) *service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 12 * time.Hour
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = 7 * 24 * time.Hour
	}
	if opts.MaxHashing <= 0 {
		opts.MaxHashing = 2
	}
	return &service{st: st, sess: newSessions(st, opts), thr: newThrottle(), hash: opts.Hash.orDefault(),
		slots: make(chan struct{}, opts.MaxHashing), now: opts.Now, noApprove: opts.NoApprove,
		secure: opts.SecureCookie, logger: logger}
}

// validLogin checks a login's shape: 1 to MaxLoginBytes of a-z, 0-9 and
// . _ @ + -, starting with a letter or a digit. Lower case only, so that
// two logins never differ by case alone.
func validLogin(login string) error {
	if login == "" || len(login) > MaxLoginBytes {
		return fmt.Errorf("%w: a login is 1 to %d bytes", ErrInvalid, MaxLoginBytes)
	}
	for i, c := range []byte(login) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '@' || c == '+' || c == '-')
		if !ok {
			return fmt.Errorf("%w: a login is lower-case letters, digits and . _ @ + - (not first), and %q is not", ErrInvalid, login)
		}
	}
	return nil
}

// validPassword checks a new password's length.
func validPassword(password string) error {
	if len(password) < MinPasswordBytes || len(password) > MaxPasswordBytes || !utf8.ValidString(password) {
		return fmt.Errorf("%w: a password is %d to %d bytes of UTF-8", ErrInvalid, MinPasswordBytes, MaxPasswordBytes)
	}
	return nil
}

// hashing takes a hashing slot, or fails at once when none is free.
func (s *service) hashing() (release func(), err error) {
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	default:
		return nil, fmt.Errorf("%w: %d password checks are running, the most this kernel runs at once", ErrBusy, cap(s.slots))
	}
}

func (s *service) newHash(password string) (string, error) {
	release, err := s.hashing()
	if err != nil {
		return "", err
	}
	defer release()
	return hashPassword(password, s.hash)
}

// principal is who a session of u is to the routes.
func (s *service) principal(u User) smshttp.Principal {
	scopes := []smshttp.Scope{smshttp.ScopeRead, smshttp.ScopeChat}
	if u.Admin {
		scopes = append(scopes, smshttp.ScopeAdmin)
		if !s.noApprove {
			scopes = append(scopes, smshttp.ScopeApprove)
		}
	}
	return smshttp.Principal{Authenticated: true, Name: smshttp.UserPrefix + u.Login, Scopes: scopes, UserID: u.ID}
}

// WhoAmI implements Identity.
func (s *service) WhoAmI(ctx context.Context) (User, bool) {
	p := smshttp.PrincipalFrom(ctx)
	if !p.Authenticated || p.UserID == 0 {
		return User{}, false
	}
	u, err := s.st.byID(ctx, p.UserID)
	if err != nil || !u.Active {
		return User{}, false
	}
	return u, true
}

// PrincipalOf implements Identity.
func (s *service) PrincipalOf(ctx context.Context, login string) (smshttp.Principal, bool) {
	u, _, err := s.st.byLogin(ctx, login)
	if err != nil || !u.Active {
		return smshttp.Principal{}, false
	}
	return s.principal(u), true
}

// UserByID implements Identity.
func (s *service) UserByID(ctx context.Context, id int64) (User, error) { return s.st.byID(ctx, id) }

// Create implements Admin.
func (s *service) Create(ctx context.Context, u NewUser) (User, error) {
	if err := errors.Join(validLogin(u.Login), validPassword(u.Password)); err != nil {
		return User{}, err
	}
	hash, err := s.newHash(u.Password)
	if err != nil {
		return User{}, err
	}
	return s.st.insertUser(ctx, newRow{login: u.Login, hash: hash, admin: u.Admin, now: s.now()})
}

// SetPassword implements Admin.
func (s *service) SetPassword(ctx context.Context, login, password string) error {
	if err := validPassword(password); err != nil {
		return err
	}
	u, _, err := s.st.byLogin(ctx, login)
	if err != nil {
		return err
	}
	hash, err := s.newHash(password)
	if err != nil {
		return err
	}
	if err := s.st.setHash(ctx, u.ID, hash); err != nil {
		return err
	}
	return s.sess.revoke(ctx, u.ID)
}

// SetAdmin implements Admin.
func (s *service) SetAdmin(ctx context.Context, login string, admin bool) error {
	return s.setFlag(ctx, login, "admin", admin)
}

// Deactivate implements Admin.
func (s *service) Deactivate(ctx context.Context, login string) error {
	return s.setFlag(ctx, login, "active", false)
}

// Activate implements Admin.
func (s *service) Activate(ctx context.Context, login string) error {
	return s.setFlag(ctx, login, "active", true)
}

// setFlag changes admin or active. Taking a right away ends the user's
// sessions; taking the last active admin's away is refused, so that
// someone can always manage the users.
func (s *service) setFlag(ctx context.Context, login, column string, value bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	before, _, err := s.st.byLogin(ctx, login)
	if err != nil {
		return err
	}
	if !value && before.Admin && before.Active {
		if err := s.keepAnAdmin(ctx, before.ID); err != nil {
			return err
		}
	}
	u, err := s.st.setFlag(ctx, login, column, value)
	if err != nil {
		return err
	}
	if !value {
		return s.sess.revoke(ctx, u.ID)
	}
	s.sess.forget(u.ID)
	return nil
}

// keepAnAdmin refuses when id is the last active admin.
func (s *service) keepAnAdmin(ctx context.Context, id int64) error {
	users, err := s.st.list(ctx)
	if err != nil {
		return err
	}
	for _, u := range users {
		if u.ID != id && u.Admin && u.Active {
			return nil
		}
	}
	return fmt.Errorf("%w: this is the last active admin; make another user admin first", ErrConflict)
}

// Get implements Admin.
func (s *service) Get(ctx context.Context, login string) (User, error) {
	u, _, err := s.st.byLogin(ctx, login)
	return u, err
}

// List implements Admin.
func (s *service) List(ctx context.Context) ([]User, error) { return s.st.list(ctx) }

// bootstrap creates the first admin unless a user has its login.
func (s *service) bootstrap(ctx context.Context, b *Bootstrap) error {
	if b == nil {
		return nil
	}
	_, _, err := s.st.byLogin(ctx, b.Login)
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	if _, err := s.Create(ctx, NewUser{Login: b.Login, Password: b.Password, Admin: true}); err != nil {
		return fmt.Errorf("bootstrap admin: %w", err)
	}
	s.logger.Info("Created the bootstrap admin", "login", b.Login)
	return nil
}
