package goja

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	js "github.com/dop251/goja"

	"github.com/sms-baseline/sms/drivers/executor/internal/workers"
	"github.com/sms-baseline/sms/kernel"
)

// HostCall is one cap call, its values already encoded: Op is "get",
// "invoke", "provide" or "contribute", Name the key or point, Method the
// invoked method, Data the value, item or arguments.
type HostCall struct {
	Op, Name, Method string
	Data             json.RawMessage
}

// AsyncHost may be implemented by the HostBridge a unit is activated with.
// The unit then starts host calls with StartHost from its own goroutine,
// instead of making them on worker goroutines. StartHost must not block, and
// must call done exactly once, from any goroutine, with what the matching
// HostBridge method returns (Contribute's id as a JSON string, Provide's
// null).
type AsyncHost interface {
	StartHost(ctx context.Context, call HostCall, done func(json.RawMessage, error))
}

// hostFunc is the host function the bridge calls: host(op, ...). It encodes
// the call's values now, on the loop, then makes the host call on its own
// goroutine and returns a promise the answer settles. A value that cannot
// cross rejects the promise; an exception thrown by a getter while encoding
// propagates to the caller like any exception.
func (u *unit) hostFunc(call js.FunctionCall) js.Value {
	p, resolve, reject := u.rt.NewPromise()
	j, host := u.running, u.hostBridge()
	if j == nil || host == nil {
		_ = reject(u.newError("the plugin is not activated"))
		return u.rt.ToValue(p)
	}
	req, err := u.hostRequest(call)
	if err == nil {
		err = u.charge(j, int64(len(req.Data)+len(req.Name)+len(req.Method)), 1)
	}
	switch {
	case err != nil:
		_ = reject(u.newError(err.Error()))
	case req.Op == "log":
		host.Log(j.ctx, "info", req.Method)
		_ = resolve(js.Undefined())
	default:
		j.inflight++
		call := &hostCallState{j: j, ctx: j.hostContext(u.deadlineErr), host: host, req: req, resolve: resolve, reject: reject}
		if u.hostLive < u.opts.MaxHostInFlight {
			u.startHost(call)
		} else {
			u.hostQueue = append(u.hostQueue, call) // started when an answer frees a place
		}
	}
	return u.rt.ToValue(p)
}

// startHost starts a host call. At most Options.MaxHostInFlight of the
// unit's host calls run at once, so the answers waiting for the loop stay
// bounded however many calls the JavaScript makes. Loop only.
func (u *unit) startHost(call *hostCallState) {
	u.hostLive++
	if async, ok := call.host.(AsyncHost); ok {
		async.StartHost(call.ctx, call.req, func(raw json.RawMessage, err error) { u.answer(call, raw, err) })
	} else if !u.offer(call) {
		workers.Go(func() { u.perform(call) })
	}
}

// startQueued starts queued host calls while places are free; those of a
// job that has ended are dropped. Loop only.
func (u *unit) startQueued() {
	for len(u.hostQueue) > 0 && u.hostLive < u.opts.MaxHostInFlight {
		call := u.hostQueue[0]
		u.hostQueue[0] = nil
		u.hostQueue = u.hostQueue[1:]
		if call.j.gone.Load() {
			call.j.inflight--
			continue
		}
		u.startHost(call)
	}
}

func (u *unit) hostRequest(call js.FunctionCall) (HostCall, error) {
	req := HostCall{Op: call.Argument(0).String(), Name: call.Argument(1).String()}
	var err error
	switch req.Op {
	case "get":
	case "invoke":
		req.Method = call.Argument(2).String()
		req.Data, err = u.encode(call.Argument(3))
	case "provide", "contribute":
		req.Data, err = u.encode(call.Argument(2))
	case "log":
		req.Method, err = u.logLine(call.Argument(1))
	default:
		err = fmt.Errorf("unknown bridge operation %s", quote(req.Op))
	}
	return req, err
}

// logLine joins cap.log's arguments: strings as they are, other values as JSON.
func (u *unit) logLine(args js.Value) (string, error) {
	list, ok := args.(*js.Object)
	if !ok {
		return "", fmt.Errorf("log arguments are not a list")
	}
	var b strings.Builder
	for i := range list.Get("length").ToInteger() {
		v := list.Get(fmt.Sprint(i))
		if i > 0 {
			b.WriteByte(' ')
		}
		if js.IsString(v) {
			b.WriteString(v.String())
		} else {
			raw, err := u.encode(v)
			if err != nil {
				return "", err
			}
			b.Write(raw)
		}
		if b.Len() > kernel.MaxSnapshotBytes {
			return "", fmt.Errorf("%w: the log line is larger than %d bytes", errValue, kernel.MaxSnapshotBytes)
		}
	}
	return b.String(), nil
}

// hostCallState is one host call in flight: who it is for, and the
// promise's resolving functions (loop only).
type hostCallState struct {
	j       *job
	ctx     context.Context // the job's host context
	host    kernel.HostBridge
	req     HostCall
	resolve func(any) error
	reject  func(any) error
}

// perform makes one host call on a worker goroutine and posts the answer to
// the loop, where it becomes a JavaScript value.
func (u *unit) perform(c *hostCallState) {
	raw, err := hostCall(c.ctx, c.host, c.req)
	u.answer(c, raw, err)
}

// answer posts a host call's answer to the loop, where it becomes a
// JavaScript value.
func (u *unit) answer(c *hostCallState, raw json.RawMessage, err error) {
	u.post(u.answerSlice(c, raw, err))
}

// answerSlice returns the loop's work for a host call's answer.
func (u *unit) answerSlice(c *hostCallState, raw json.RawMessage, err error) func() {
	return func() {
		c.j.inflight--
		u.hostLive--
		u.startQueued()
		u.slice(c.j, func() error {
			if err == nil {
				err = u.charge(c.j, int64(len(raw)), 0)
			}
			if err != nil {
				return c.reject(u.newError(err.Error()))
			}
			v, err := u.decode(raw)
			if err != nil {
				return c.reject(u.newError(err.Error()))
			}
			return c.resolve(v)
		})
	}
}

func hostCall(ctx context.Context, host kernel.HostBridge, req HostCall) (raw json.RawMessage, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("host %s panicked: %v", req.Op, r)
		}
	}()
	switch req.Op {
	case "get":
		return host.Get(ctx, req.Name)
	case "invoke":
		return host.Invoke(ctx, req.Name, req.Method, req.Data)
	case "provide":
		return nil, host.Provide(ctx, req.Name, req.Data)
	default: // contribute
		id, err := host.Contribute(ctx, req.Name, req.Data)
		if err != nil {
			return nil, err
		}
		return json.Marshal(id)
	}
}

// newError returns a JavaScript Error with the message, made with the
// constructor the bridge captured before agent code ran.
func (u *unit) newError(msg string) js.Value {
	obj, err := u.rt.New(u.h.errorCtor, u.rt.ToValue(msg))
	if err != nil {
		return u.rt.ToValue(msg)
	}
	return obj
}

// errBridgeBudget is wrapped by the error of a job that asked too much of
// the host (Options.MaxHostCalls, MaxHostInFlight, MaxHostBytes).
var errBridgeBudget = errors.New("bridge budget exceeded")

// charge counts a host call (calls is 1) or an answer (calls is 0) of size
// bytes against j's budget. Past the budget it interrupts the JavaScript
// running now, so the job fails whatever the code catches, and returns
// the error for the promise at hand. Loop only.
func (u *unit) charge(j *job, bytes int64, calls int) error {
	j.calls += calls
	j.bytes += bytes
	var over string
	switch {
	case j.calls > u.opts.MaxHostCalls:
		over = fmt.Sprintf("more than %d cap calls", u.opts.MaxHostCalls)
	case j.bytes > u.opts.MaxHostBytes:
		over = fmt.Sprintf("more than %d bytes through cap calls", u.opts.MaxHostBytes)
	default:
		return nil
	}
	err := fmt.Errorf("%w: %s made %s in one %s", errBridgeBudget, u.plugin, over, j.kind())
	u.interrupt(j, err)
	return err
}
