// Package baselinetest boots a real kernel server for tests: in-memory
// SQLite, the in-process goja executor, every system plugin, and the
// application's plugins, with approvals optionally skipped. Call drives it
// over its HTTP handler without a network listener.
package baselinetest
