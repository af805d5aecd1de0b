// Package auth is the system plugin that gives a kernel users: logins
// with argon2id password hashes in the tenant's database, cookie
// sessions, the identity keys and the routes under /api/auth.
//
// A session's principal is named smshttp.UserPrefix + login, carries the
// user's id, and holds the read and chat scopes; an admin's also holds
// admin and, unless Options.NoApprove, approve. The ORM's and the
// collections' REST routes admit any user and leave the rest to their
// guard (plugins/rbac).
//
// Invariants:
//   - no password, hash, cookie value or session id leaves the plugin: not
//     in an answer, an event, a log line or an error; the sessions table
//     keys each session by the SHA-256 of its cookie value;
//   - a login opens a new session with a fresh random value (no
//     fixation); logout, a password change, deactivation and losing the
//     admin right end the user's sessions before the call returns, and
//     the next request of any of them is anonymous;
//   - a failed login answers the same error, in the same time, whether or
//     not the login exists; failures per login are slowed, then refused
//     for a while (throttle.go), whether or not the login exists;
//   - at most Options.MaxHashing password hashes run at once; past that a
//     login is refused (429), never queued;
//   - a state-changing request authenticated by the cookie, and every
//     login, must carry CSRFHeader;
//   - the last active admin cannot be deactivated or lose the right.
//
// The tables (auth_users, auth_sessions) have one writer, this plugin;
// its in-memory session cache is dropped by the same calls that change
// them, so it never outlives a revocation.
package auth
