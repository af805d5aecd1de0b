package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/sms-baseline/sms/kernel"
)

// checkLoad activates the plugin in a throwaway unit whose bridge never
// touches the live kernel: reads and invocations answer null, provides and
// contributions go nowhere. It checks that the code loads and terminates,
// and gives early feedback: a key provided but not declared, a point not
// declared, unknown or system-only, an item the point refuses, or an
// activation that fails refuse the plugin, even when agent code caught the
// error. Nothing here is a safety decision: code can behave differently on
// trial, and the kernel enforces the same rules on every live call.
func (j *Judge) checkLoad(ctx context.Context, s *Submission) error {
	if j.opts.Executor == nil {
		return errors.New("no executor is configured for the load gate")
	}
	code := []byte(s.Code)
	// The trial unit counts against the requester's share of the executor;
	// the executor may keep what it ran in for the mount's Load.
	unit, err := j.opts.Executor.Load(kernel.WithTrial(kernel.WithRequester(ctx, s.RequestedBy)), kernel.Bundle{Manifest: s.Manifest, Code: code, CodeHash: s.CodeHash})
	if kernel.CodeOf(err) == kernel.CodeConflict {
		return busyError{err}
	}
	if err != nil {
		return err
	}
	defer func() { _ = unit.Close() }()
	rec := &recorder{m: s.Manifest, catalog: s.Catalog}
	if err := unit.Activate(ctx, rec); err != nil {
		if first := rec.firstProblem(); first != nil {
			return first
		}
		return fmt.Errorf("activate failed: %w", err)
	}
	return rec.firstProblem()
}

// busyError is a load refused for want of capacity: an executor refuses a
// Load with a kernel.Error of CodeConflict when a bound on what it runs at
// once would be passed (the isolated executor's sandbox limits, its
// ErrLimit). The same code may load once units close (Verdict.Retry).
type busyError struct{ err error }

func (e busyError) Error() string { return e.err.Error() }
func (e busyError) Unwrap() error { return e.err }

// isBusy reports whether a gate refused for want of capacity (busyError),
// not for anything in the submission.
func isBusy(err error) bool {
	var b busyError
	return errors.As(err, &b)
}

// recorder is the load gate's kernel.HostBridge: it checks each call as
// the kernel would and remembers the problems.
type recorder struct {
	m       kernel.Manifest
	catalog kernel.Catalog

	mu       sync.Mutex
	problems []error
	items    int
}

func (r *recorder) problem(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	r.mu.Lock()
	r.problems = append(r.problems, err)
	r.mu.Unlock()
	return err
}

func (r *recorder) firstProblem() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.problems) == 0 {
		return nil
	}
	return r.problems[0]
}

func (r *recorder) read(key string) error {
	if !slices.Contains(r.m.Inject, key) && !slices.Contains(r.m.Optional, key) {
		return r.problem("activate reads key %q, which is not declared in inject or optional", key)
	}
	if k := findKey(r.catalog, key); k != nil && k.Meta.MinConsumerTrust > kernel.TrustAgent {
		return r.problem("activate reads key %q, which is system-only", key)
	}
	return nil
}

// Get implements kernel.HostBridge.
func (r *recorder) Get(_ context.Context, key string) (json.RawMessage, error) {
	if err := r.read(key); err != nil {
		return nil, err
	}
	return json.RawMessage("null"), nil
}

// Invoke implements kernel.HostBridge.
func (r *recorder) Invoke(_ context.Context, key, _ string, _ json.RawMessage) (json.RawMessage, error) {
	if err := r.read(key); err != nil {
		return nil, err
	}
	return json.RawMessage("null"), nil
}

// Provide implements kernel.HostBridge.
func (r *recorder) Provide(_ context.Context, key string, value json.RawMessage) error {
	if !slices.Contains(r.m.Provide, key) {
		return r.problem("activate provides key %q, which is not declared in provide", key)
	}
	if k := findKey(r.catalog, key); k != nil && k.Meta.MinProviderTrust > kernel.TrustAgent {
		return r.problem("activate provides key %q, which only a system plugin may provide", key)
	}
	if _, err := kernel.Decode(value); err != nil {
		return r.problem("activate provides key %q: %w", key, err)
	}
	return nil
}

// Contribute implements kernel.HostBridge.
func (r *recorder) Contribute(_ context.Context, point string, item json.RawMessage) (string, error) {
	if !slices.Contains(r.m.DeclaredPoints(), point) {
		return "", r.problem("activate contributes to point %q, which is not declared in points", point)
	}
	p := findPoint(r.catalog, point)
	if p == nil {
		return "", r.problem("activate contributes to point %q, which is not defined", point)
	}
	if p.Meta.MinContributorTrust > kernel.TrustAgent {
		return "", r.problem("activate contributes to point %q, which is system-only", point)
	}
	v, err := kernel.Decode(item)
	if err != nil {
		return "", r.problem("activate contributes to point %q: %w", point, err)
	}
	if check := p.Meta.Validator(r.m.ID); check != nil {
		if err := validate(check, withNullFuncs(v)); err != nil {
			return "", r.problem("point %q refuses the item: %w", point, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items++
	return "load-gate#" + strconv.Itoa(r.items), nil
}

// Log implements kernel.HostBridge: the load gate's logs go nowhere.
func (r *recorder) Log(context.Context, string, string) {}

// withNullFuncs replaces {"$fn": id} references with functions that fail,
// so a point's validator sees the shape it will see at mount.
func withNullFuncs(v any) any {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t["$fn"].(string); ok && len(t) == 1 {
			return kernel.Func(func(context.Context, ...any) (any, error) {
				return nil, errors.New("functions cannot be called in the load gate")
			})
		}
		for k, x := range t {
			t[k] = withNullFuncs(x)
		}
	case []any:
		for i, x := range t {
			t[i] = withNullFuncs(x)
		}
	}
	return v
}

func validate(fn func(any) error, item any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the validator panicked: %v", r)
		}
	}()
	return fn(item)
}
