package kernel

import (
	"errors"
	"strings"
)

// Code classifies a kernel error so callers can branch on it and HTTP layers
// can map it to a status.
type Code string

// Error codes returned by the kernel.
const (
	// CodeNotFound: no fiber, key, blob or contribution with that name.
	CodeNotFound Code = "NOT_FOUND"
	// CodeReservedID: an agent plugin tried to take the id of a system fiber.
	CodeReservedID Code = "RESERVED_ID"
	// CodeTrust: the fiber's trust tier is below what the key or point needs.
	CodeTrust Code = "TRUST"
	// CodeUndeclaredKey: a fiber used a key its manifest does not declare.
	CodeUndeclaredKey Code = "UNDECLARED_KEY"
	// CodeUndeclaredPoint: an agent fiber contributed to a point its
	// manifest does not declare.
	CodeUndeclaredPoint Code = "UNDECLARED_POINT"
	// CodeUnknownPoint: a contribution names a point nobody defined.
	CodeUnknownPoint Code = "UNKNOWN_POINT"
	// CodeValidation: a manifest, item or argument is malformed.
	CodeValidation Code = "VALIDATION"
	// CodeAuthorization: a mount authorization is missing, forged, reused or
	// does not match the manifest and code.
	CodeAuthorization Code = "AUTHORIZATION"
	// CodeConflict: the name is already taken (a key provided by another
	// fiber, a fiber id installed twice, a definition with other trust).
	CodeConflict Code = "CONFLICT"
	// CodeLifecycle: the call is not allowed in the fiber's current state,
	// such as providing after activation or calling a disposed function.
	CodeLifecycle Code = "LIFECYCLE"
	// CodeForbidden: the operation needs an explicit override, such as
	// uninstalling a system fiber without force.
	CodeForbidden Code = "FORBIDDEN"
	// CodeActivation: a plugin's activate code returned an error or panicked.
	CodeActivation Code = "ACTIVATION"
	// CodeCapability: the fiber's capability set lacks what a key, a
	// method or a point needs, or a plugin's declaration asks for more
	// than its requester may grant.
	CodeCapability Code = "CAPABILITY"
	// CodeUnavailable: the kernel does not do this in its current mode
	// (safe mode mounts no agent plugin); the same call may pass once the
	// kernel restarts in its normal mode.
	CodeUnavailable Code = "UNAVAILABLE"
	// CodeBudget: the plugin, the user who asked for it or the tenant
	// used up a budget (Options.Meter); the message names which and the
	// limit. Only that plugin's calls are refused, until the budget's
	// period turns or its limit is raised.
	CodeBudget Code = "BUDGET"
	// CodeInternal: the event log or blob store failed.
	CodeInternal Code = "INTERNAL"
)

// Error is the error type every kernel operation returns. It carries a code,
// the fiber involved (if any) and the kernel's taint flags at the time.
type Error struct {
	Code    Code
	Op      string // the kernel operation, e.g. "provide"
	Fiber   string // the fiber involved, if any
	Message string
	Taint   TaintSet
	Err     error // the underlying cause, if any
}

// Error formats the error as "kernel: op fiber: message: cause [taint: ...]".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("kernel")
	if e.Op != "" {
		b.WriteString(": " + e.Op)
	}
	if e.Fiber != "" {
		b.WriteString(" " + e.Fiber)
	}
	b.WriteString(": " + e.Message)
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	if !e.Taint.Empty() {
		b.WriteString(" [taint: " + e.Taint.String() + "]")
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is a *Error with the same code, so
// errors.Is(err, &kernel.Error{Code: kernel.CodeTrust}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == "" && t.Op == ""
}

// CodeOf returns the code of the first *Error in err's chain, or "" if none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// kerr builds an *Error without taint; the kernel attaches taint on return.
func kerr(code Code, op, fiber, msg string) *Error {
	return &Error{Code: code, Op: op, Fiber: fiber, Message: msg}
}
