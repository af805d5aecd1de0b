package kernel

import (
	"context"
	"encoding/json"
)

// Bundle is the agent code an Executor loads.
type Bundle struct {
	Manifest Manifest
	Code     []byte
	CodeHash string
}

// Executor runs agent plugins' code outside the kernel's trust. Load
// compiles a bundle into a Unit; it must not run the plugin's activation.
// Implementations must be safe for concurrent use.
type Executor interface {
	Load(ctx context.Context, b Bundle) (Unit, error)
}

// Unit is one loaded agent plugin. The kernel calls Activate once, Call any
// number of times (possibly concurrently, so a Unit serializes what must be
// serialized), and Close once, after which Call must fail.
type Unit interface {
	// Activate runs the plugin's activate function against the host bridge
	// and returns when it has settled.
	Activate(ctx context.Context, host HostBridge) error
	// Call invokes a function the plugin handed over as {"$fn": id}. Args is
	// a JSON array; the result is a JSON value.
	Call(ctx context.Context, fn string, args json.RawMessage) (json.RawMessage, error)
	// Close disposes the unit and everything it holds.
	Close() error
}

// HostBridge is the kernel side of an agent plugin's cap object. Every call
// re-checks the fiber's lifecycle, its manifest declarations and trust, and
// every value crosses as a size- and depth-limited JSON snapshot. Inside
// provided values and contributed items, {"$fn": id} objects become Func
// proxies that call back into the unit until the fiber is disposed. An
// Executor passes each method a context that ends when the activation or
// call the host call serves ends: at its deadline, when its caller's
// context ends, or when it returns. Services reached through Invoke must
// honour it.
type HostBridge interface {
	// Get returns a snapshot of a key declared in inject or optional.
	Get(ctx context.Context, key string) (json.RawMessage, error)
	// Invoke calls a method on a declared key's value: an Invoker service,
	// or a Func field of a value another agent plugin provided.
	Invoke(ctx context.Context, key, method string, args json.RawMessage) (json.RawMessage, error)
	// Provide provides a key declared in provide (activation only).
	Provide(ctx context.Context, key string, value json.RawMessage) error
	// Contribute contributes an item to a point (activation only).
	Contribute(ctx context.Context, point string, item json.RawMessage) (string, error)
	// Log writes a line to the kernel's log, attributed to the fiber.
	Log(ctx context.Context, level, msg string)
}

// Invoker is implemented by service values that agent code may call through
// HostBridge.Invoke. Args are decoded JSON values; the result is encoded as a
// JSON snapshot.
type Invoker interface {
	Invoke(ctx context.Context, method string, args []any) (any, error)
}

// Func is a host-callable function. Functions an agent plugin hands over
// arrive as Func values inside items and provided values; they fail with
// CodeLifecycle once the fiber is disposed.
type Func func(ctx context.Context, args ...any) (any, error)

// MarshalJSON encodes a Func as null: functions never cross as data.
func (Func) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// requesterKey carries who asked for the agent plugin being loaded.
type requesterKey struct{}

// WithRequester returns ctx saying who asked for the agent plugin whose
// code is loaded under it: the judge sets the submission's RequestedBy
// for its load gate and the mount, so that an Executor may bound what one
// requester holds. Loads nobody asked for (a restore at boot, an enable)
// carry none.
func WithRequester(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, requesterKey{}, who)
}

// RequesterOf returns who WithRequester named in ctx, or "".
func RequesterOf(ctx context.Context) string {
	who, _ := ctx.Value(requesterKey{}).(string)
	return who
}

// trialKey marks a trial load.
type trialKey struct{}

// WithTrial returns ctx marking the Load made under it as a trial: the
// judge's load gate activates the unit against a recorder, closes it, and
// loads the same bundle again for the mount when the submission passes.
// An Executor may keep what the trial unit ran in for that Load (the
// isolated executor keeps its child).
func WithTrial(ctx context.Context) context.Context {
	return context.WithValue(ctx, trialKey{}, true)
}

// IsTrial reports whether WithTrial marked ctx.
func IsTrial(ctx context.Context) bool {
	trial, _ := ctx.Value(trialKey{}).(bool)
	return trial
}
