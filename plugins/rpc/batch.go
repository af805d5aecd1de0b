package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/meta"
	"github.com/sms-baseline/sms/plugins/orm"
)

// server serves the two routes.
type server struct {
	opts   Options
	db     contracts.Database
	orm    kernel.Invoker
	meta   func() (kernel.Invoker, bool)
	flight *flight
}

func (s *server) serveORM(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	return s.serve(ctx, r, s.orm)
}

func (s *server) serveMeta(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	m, ok := s.meta()
	if !ok {
		return nil, smshttp.NewError(smshttp.KindNotFound, MetaPath+" needs the meta plugin, which is off in this kernel")
	}
	return s.serve(ctx, r, m)
}

// serve checks the batch against the bounds, then runs it.
func (s *server) serve(ctx context.Context, r *smshttp.Request, target kernel.Invoker) (*smshttp.Response, error) {
	calls, single, err := s.decode(r)
	if err != nil {
		return nil, err
	}
	writes := false
	for _, c := range calls {
		writes = writes || WriteMethods[c.Method]
	}
	who := smshttp.PrincipalFrom(ctx)
	userSession := s.opts.Users && who.UserID != 0 // rbac decides for users
	if writes && who.Authenticated && !userSession && !who.Has(smshttp.ScopeAdmin) {
		return nil, smshttp.NewError(smshttp.KindForbidden, fmt.Sprintf("credential %s lacks the admin scope that a batch with writes needs", who.Name))
	}
	release, err := s.flight.acquire(callerOf(who))
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	out := make([]Result, len(calls))
	first := len(calls) // the first write
	for i, c := range calls {
		if WriteMethods[c.Method] {
			first = i
			break
		}
	}
	// The reads before the first write run before the transaction, so they
	// do not hold it; in a batch with writes the first failure stops it.
	for i := range first {
		if out[i] = s.run(ctx, target, calls[i]); writes && out[i].Error != nil {
			for j := i + 1; j < len(calls); j++ {
				out[j] = failure(calls[j], CodeNotRun, fmt.Sprintf("not run: call %d of the batch failed", i+1), KindNotRun)
			}
			return answer(out, calls, single), nil
		}
	}
	if writes {
		tctx, cancel := context.WithTimeout(ctx, s.opts.TxTimeout)
		defer cancel()
		copy(out[first:], s.atomic(tctx, target, calls[first:], first))
	}
	return answer(out, calls, single), nil
}

// atomic runs a batch with writes in one transaction: the first failure
// rolls back the calls before it and skips the ones after it.
func (s *server) atomic(ctx context.Context, target kernel.Invoker, calls []Call, offset int) []Result {
	out := make([]Result, len(calls))
	failed := -1
	err := contracts.Atomic(ctx, s.db, func(ctx context.Context) error {
		for i, c := range calls {
			out[i] = s.run(ctx, target, c)
			if out[i].Error != nil {
				failed = i
				return errors.New(out[i].Error.Message)
			}
		}
		return nil
	})
	switch {
	case failed >= 0:
		for i := range calls {
			switch {
			case i < failed:
				out[i] = failure(calls[i], CodeRolledBack, fmt.Sprintf("rolled back: call %d of the batch failed", offset+failed+1), KindRolledBack)
			case i > failed:
				out[i] = failure(calls[i], CodeNotRun, fmt.Sprintf("not run: call %d of the batch failed", offset+failed+1), KindNotRun)
			}
		}
	case err != nil: // the commit itself failed
		for i := range calls {
			out[i] = failure(calls[i], CodeInternal, "the batch's transaction failed: "+err.Error(), string(smshttp.KindInternal))
		}
	}
	return out
}

// run runs one call.
func (s *server) run(ctx context.Context, target kernel.Invoker, c Call) Result {
	if c.JSONRPC != Version {
		return failure(c, CodeInvalidRequest, fmt.Sprintf("jsonrpc must be %q", Version), string(smshttp.KindValidation))
	}
	if c.Method == "" {
		return failure(c, CodeInvalidRequest, "method is missing", string(smshttp.KindValidation))
	}
	v, err := target.Invoke(ctx, c.Method, c.Params)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failure(c, CodeInternal, fmt.Sprintf("the batch ran past its time limit (%s in all, %s for its transaction)", s.opts.Timeout, s.opts.TxTimeout), string(smshttp.KindTooMany))
	}
	if err != nil {
		return fromError(c, err)
	}
	return Result{JSONRPC: Version, ID: idOf(c), Result: v}
}

func idOf(c Call) json.RawMessage {
	if len(c.ID) == 0 {
		return json.RawMessage("null")
	}
	return c.ID
}

func failure(c Call, code int, msg, kind string) Result {
	return Result{JSONRPC: Version, ID: idOf(c), Error: &CallError{Code: code, Message: msg, Data: &ErrorData{Kind: kind}}}
}

// fromError maps an error to its code and kind, keeping the ORM's model
// and field.
func fromError(c Call, err error) Result {
	kind := smshttp.KindOf(err)
	code := CodeInternal
	switch {
	case strings.Contains(err.Error(), "has no method"):
		code, kind = CodeMethodNotFound, smshttp.KindNotFound
	case errors.Is(err, orm.ErrNotFound), errors.Is(err, meta.ErrNotFound):
		code, kind = CodeNotFound, smshttp.KindNotFound
	case errors.Is(err, orm.ErrInvalid), errors.Is(err, meta.ErrInvalid):
		code, kind = CodeInvalidParams, smshttp.KindValidation
	case errors.Is(err, orm.ErrForbidden):
		code, kind = CodeForbidden, smshttp.KindForbidden
	case errors.Is(err, orm.ErrConflict):
		code, kind = CodeConflict, smshttp.KindConflict
	case errors.Is(err, orm.ErrRejected):
		code, kind = CodeRejected, smshttp.KindValidation
	case errors.Is(err, orm.ErrBusy):
		code, kind = CodeInternal, smshttp.KindTooMany
	case kind == smshttp.KindValidation:
		code = CodeInvalidParams
	}
	r := failure(c, code, err.Error(), string(kind))
	var oe *orm.Error
	if errors.As(err, &oe) {
		r.Error.Data.Model, r.Error.Data.Field = oe.Model, oe.Field
	}
	return r
}

// answer is the response: one Result per call with an id, an object for a
// single call, an array for a batch, and 204 when every call was a
// notification.
func answer(out []Result, calls []Call, single bool) *smshttp.Response {
	kept := make([]Result, 0, len(out))
	for i, r := range out {
		if len(calls[i].ID) > 0 {
			kept = append(kept, r)
		}
	}
	switch {
	case len(kept) == 0:
		return &smshttp.Response{Status: 204}
	case single:
		return smshttp.JSON(kept[0])
	}
	return smshttp.JSON(kept)
}

// decode reads the body: one call object or a non-empty array of them,
// within the bounds.
func (s *server) decode(r *smshttp.Request) ([]Call, bool, error) {
	var raw []byte
	switch b := r.Body.(type) {
	case string: // a text content type: decode it anyway, as the ORM's REST does
		raw = []byte(b)
	case nil:
		return nil, false, smshttp.NewError(smshttp.KindValidation, "the body must be a JSON-RPC 2.0 call or a batch (an array) of them")
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return nil, false, err
		}
	}
	if len(raw) > s.opts.MaxBytes {
		return nil, false, smshttp.NewError(smshttp.KindTooLarge, fmt.Sprintf("the batch is %d bytes; the limit is %d bytes per batch", len(raw), s.opts.MaxBytes))
	}
	raw = bytes.TrimSpace(raw)
	single := len(raw) > 0 && raw[0] == '{'
	var calls []Call
	var err error
	if single {
		var c Call
		err = strictDecode(raw, &c)
		calls = []Call{c}
	} else {
		err = strictDecode(raw, &calls)
	}
	switch {
	case err != nil:
		return nil, false, smshttp.NewError(smshttp.KindValidation, "the body must be a JSON-RPC 2.0 call or a batch (an array) of them: "+err.Error())
	case len(calls) == 0:
		return nil, false, smshttp.NewError(smshttp.KindValidation, "the batch is empty")
	case len(calls) > s.opts.MaxCalls:
		return nil, false, smshttp.NewError(smshttp.KindTooMany, fmt.Sprintf("the batch has %d calls; the limit is %d calls per batch", len(calls), s.opts.MaxCalls))
	}
	return calls, single, nil
}

func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
