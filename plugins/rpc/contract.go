package rpc

import (
	"encoding/json"
	"time"
)

// PluginID is the id of the RPC system plugin.
const PluginID = "sms.rpc"

// Routes the plugin serves.
const (
	// Path takes a batch of ORM calls.
	Path = "/api/rpc"
	// MetaPath takes a batch of meta calls (views, actions, menus).
	MetaPath = "/api/rpc/meta"
)

// Default bounds; Options override them.
const (
	DefaultMaxCalls  = 100
	DefaultMaxBytes  = 512 << 10
	DefaultPerCaller = 4
	DefaultPerKernel = 32
	DefaultTimeout   = 10 * time.Second
	DefaultTxTimeout = 2 * time.Second
)

// Version is the only JSON-RPC version spoken.
const Version = "2.0"

// Error codes. The first four are JSON-RPC 2.0's own; the others are in
// its range for server errors, one per error kind of the admin API.
const (
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	// CodeNotFound: no such record, model method or view.
	CodeNotFound = -32004
	// CodeForbidden: the guard (or the credential's scope) refused.
	CodeForbidden = -32003
	// CodeConflict: an onDelete restrict blocked an unlink.
	CodeConflict = -32009
	// CodeRejected: a before hook or a model method refused.
	CodeRejected = -32010
	// CodeRolledBack: the call ran, but a later call of its transaction
	// failed, so what it did was rolled back.
	CodeRolledBack = -32020
	// CodeNotRun: an earlier call of the transaction failed, so this one
	// never ran.
	CodeNotRun = -32021
)

// Kinds of the two errors a failed transaction gives the calls it did
// not fail on.
const (
	KindRolledBack = "rolled_back"
	KindNotRun     = "not_run"
)

// Call is one call of a batch. Params are the arguments of the method in
// order, as cap.invoke takes them after the method name. A call without an
// id is a notification: it runs, and the answer leaves it out.
type Call struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  []any           `json:"params,omitempty"`
}

// Result is the answer to one call: Result or Error, never both.
type Result struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *CallError      `json:"error,omitempty"`
}

// CallError is a call's error.
type CallError struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *ErrorData `json:"data,omitempty"`
}

// ErrorData says what kind of error it is (the admin API's kinds) and, for
// the ORM's, which model and field.
type ErrorData struct {
	Kind  string `json:"kind"`
	Model string `json:"model,omitempty"`
	Field string `json:"field,omitempty"`
}

// Options configure the plugin. Zero fields take the defaults.
type Options struct {
	// MaxCalls is the most calls a batch may hold.
	MaxCalls int
	// MaxBytes is the largest batch body.
	MaxBytes int
	// PerCaller is how many batches one credential or user may have in
	// flight at once; PerKernel how many all callers together may.
	PerCaller, PerKernel int
	// Timeout bounds a batch, and TxTimeout the transaction of a batch with
	// writes, which (on SQLite) holds the database: other requests wait
	// for it no longer than this.
	Timeout, TxTimeout time.Duration
	// Users serves the routes to every user's session, as orm.Options.UserREST
	// serves the ORM's REST API; set them alike.
	Users bool
}

// WriteMethods are the methods that change records; a batch holding one
// is a transaction.
var WriteMethods = map[string]bool{"create": true, "write": true, "unlink": true, "call": true}
