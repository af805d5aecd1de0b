// Package identity tests users, sessions and access control end to end:
// a kernel booted by baselinetest with auth on, on SQLite and Postgres,
// driven over HTTP as browsers, credentials and the chat agent drive it.
package identity
