package auth

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// PluginID is the id of the auth system plugin.
const PluginID = "sms.auth"

// IdentityKey is the key whose value is the Identity: who the request or
// chat turn being served is. System plugins read it; agent plugins may
// inject it (cap.invoke('identity', 'whoami')). It never answers a secret.
const IdentityKey = "identity"

// AdminKey is the system-only key whose value is the Admin: creating users,
// setting passwords and admin rights, deactivating and activating, listing.
const AdminKey = "identity-admin"

// Errors the Admin and Identity wrap, for errors.Is.
var (
	// ErrInvalid: the input is malformed (the message says which field).
	ErrInvalid = errors.New("invalid")
	// ErrNotFound: no user has that login.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a user already has that login.
	ErrConflict = errors.New("conflict")
	// ErrBadLogin: the login or the password is wrong, or the user is not
	// active. It never says which.
	ErrBadLogin = errors.New("wrong login or password")
	// ErrThrottled: too many failed logins for this login; try again later.
	ErrThrottled = errors.New("too many failed logins")
	// ErrBusy: every password hashing slot is taken; try again shortly.
	ErrBusy = errors.New("busy")
)

// User is a user as every answer shows them: never a password or a hash.
type User struct {
	ID        int64     `json:"id"`
	Login     string    `json:"login"`
	Admin     bool      `json:"admin"`
	Active    bool      `json:"active"`
	CreatedAt time.Time `json:"createdAt"`
}

// NewUser is what creating a user takes.
type NewUser struct {
	Login    string `json:"login"`
	Password string `json:"password"`
	Admin    bool   `json:"admin,omitempty"`
}

// Identity is the value of IdentityKey.
type Identity interface {
	// WhoAmI returns the active user the request or chat turn ctx serves
	// (from its principal), and false for anyone else: an anonymous
	// caller, a bearer credential, a user deactivated since.
	WhoAmI(ctx context.Context) (User, bool)
	// UserByID returns the user with id, active or not.
	UserByID(ctx context.Context, id int64) (User, error)
	// PrincipalOf is the principal a session of the active user login
	// has, with their rights now; false when no active user has it. What
	// an agent plugin's jobs and hooks act as (baseline's ActAs).
	PrincipalOf(ctx context.Context, login string) (smshttp.Principal, bool)
}

// Admin is the value of AdminKey. Every change that takes rights away
// (SetPassword, SetAdmin to false, Deactivate) ends the user's sessions
// before it returns.
type Admin interface {
	// Create adds an active user.
	Create(ctx context.Context, u NewUser) (User, error)
	// SetPassword replaces a user's password.
	SetPassword(ctx context.Context, login, password string) error
	// SetAdmin gives or takes the admin right.
	SetAdmin(ctx context.Context, login string, admin bool) error
	// Deactivate stops a user from logging in or acting, at once.
	Deactivate(ctx context.Context, login string) error
	// Activate lets a deactivated user log in again.
	Activate(ctx context.Context, login string) error
	// Get returns one user by login.
	Get(ctx context.Context, login string) (User, error)
	// List returns every user, by id.
	List(ctx context.Context) ([]User, error)
}

// Bootstrap is the first admin, created when no user has that login yet:
// a later boot with another password does not reset a changed one.
type Bootstrap struct {
	Login    string
	Password string
}

// Options configure the plugin. Every field is optional.
type Options struct {
	// Bootstrap, when set, is the first admin.
	Bootstrap *Bootstrap
	// Hash is the password hashing cost; the zero value takes DefaultHash.
	// Raising it upgrades each user's hash at their next login.
	Hash HashParams
	// IdleTimeout ends a session unused this long (default 12 hours);
	// MaxAge ends any session this old (default 7 days).
	IdleTimeout time.Duration
	MaxAge      time.Duration
	// SecureCookie marks the session cookie Secure (and names it with the
	// __Host- prefix) even on plain HTTP: for a kernel behind a proxy that
	// terminates TLS. A request that arrives over TLS always gets it.
	SecureCookie bool
	// NoApprove keeps the approve scope from every session, admins'
	// included: under the operator, a decision reaches a kernel only
	// through an Approval object.
	NoApprove bool
	// MaxHashing bounds the password hashes computed at once (default 2):
	// each takes Hash.MemoryKiB of memory. A login past it is refused
	// with ErrBusy rather than queued.
	MaxHashing int
	// Now is the clock; the default is time.Now.
	Now func() time.Time
}

// Limits on what a caller sends.
const (
	// MaxLoginBytes bounds a login.
	MaxLoginBytes = 64
	// MinPasswordBytes and MaxPasswordBytes bound a password.
	MinPasswordBytes = 8
	MaxPasswordBytes = 1024
)

// CSRFHeader must be present (any value) on every state-changing request
// a session cookie authenticates, and on a login: a cross-site form cannot
// set a header, and a cross-site script cannot without the kernel's CORS
// consent, which it never gives.
const CSRFHeader = adminv1.CSRFHeader

// Versioned marks h's answers with the admin API version, as every
// route of its wire contract (adminv1) answers.
func Versioned(h smshttp.Handler) smshttp.Handler {
	return func(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
		resp, err := h(ctx, r)
		if resp != nil {
			if resp.Headers == nil {
				resp.Headers = map[string]string{}
			}
			maps.Copy(resp.Headers, adminv1.VersionHeaders())
		}
		return resp, err
	}
}
