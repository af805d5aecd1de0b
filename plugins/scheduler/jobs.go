package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sync"

	"github.com/sms-baseline/sms/kernel"
)

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)

// jobItem is the JSON shape of a job; the handler was taken out before
// decoding, so it only has to tolerate the key. EveryMs is a float so that a
// fraction is reported as such rather than as a decoding error.
type jobItem struct {
	Name    string          `json:"name"`
	EveryMs float64         `json:"everyMs"`
	Handler json.RawMessage `json:"handler"`
}

// parseJob reads a SchedulePoint item: a Job with a Go handler, or the JSON
// shape whose handler is an agent plugin's function (a kernel.Func).
func parseJob(item any) (Job, error) {
	var j Job
	switch it := item.(type) {
	case Job:
		j = it
	case *Job:
		if it == nil {
			return j, fmt.Errorf("a job is {name, everyMs, handler}, got a nil *Job")
		}
		j = *it
	case map[string]any:
		fn, ok := it["handler"].(kernel.Func)
		if !ok {
			return j, fmt.Errorf("job %v: handler must be a function", it["name"])
		}
		raw, err := decodeJob(it)
		if err != nil {
			return j, err
		}
		if raw.EveryMs != math.Trunc(raw.EveryMs) || math.Abs(raw.EveryMs) > 1<<53 {
			return j, fmt.Errorf("job %q: everyMs %v must be a whole number of milliseconds", raw.Name, raw.EveryMs)
		}
		j = Job{Name: raw.Name, EveryMs: int64(raw.EveryMs), Handler: agentHandler(fn)}
	default:
		return j, fmt.Errorf("a job is {name, everyMs, handler}, got %T", item)
	}
	return j, checkJob(j)
}

func decodeJob(item map[string]any) (jobItem, error) {
	var out jobItem
	raw, err := json.Marshal(item)
	if err != nil {
		return out, fmt.Errorf("encode job: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return out, fmt.Errorf("a job is {name, everyMs, handler}: %w", err)
	}
	return out, nil
}

func checkJob(j Job) error {
	if len(j.Name) > MaxNameLen || !namePattern.MatchString(j.Name) {
		return fmt.Errorf("job name %q must be a lowercase letter followed by lowercase letters, digits, _, . or -, at most %d characters",
			j.Name, MaxNameLen)
	}
	if j.EveryMs < MinEveryMs {
		return fmt.Errorf("job %q: everyMs %d must be at least %d", j.Name, j.EveryMs, MinEveryMs)
	}
	if j.Handler == nil {
		return fmt.Errorf("job %q has no handler", j.Name)
	}
	return nil
}

// agentHandler adapts an agent plugin's function: the run crosses as a
// JSON snapshot, the result is ignored and a thrown error is the failure.
func agentHandler(fn kernel.Func) Handler {
	return func(ctx context.Context, r Run) error {
		_, err := fn(ctx, r)
		return err
	}
}

// entry is a live job with the contribution that brought it.
type entry struct {
	id     string
	plugin string
	job    Job
}

// registry holds the live jobs in contribution order.
type registry struct {
	mu   sync.RWMutex
	jobs []entry
}

// check reports the live job that already has j's name.
func (r *registry) check(j Job) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.checkLocked(j)
}

func (r *registry) checkLocked(j Job) error {
	for _, e := range r.jobs {
		if e.job.Name == j.Name {
			return fmt.Errorf("job %q is already scheduled by plugin %s", j.Name, e.plugin)
		}
	}
	return nil
}

// add registers a job unless its name is taken (possible only for
// contributions made while this plugin was inactive).
func (r *registry) add(e entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkLocked(e.job); err != nil {
		return err
	}
	r.jobs = append(r.jobs, e)
	return nil
}

func (r *registry) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = slices.DeleteFunc(r.jobs, func(e entry) bool { return e.id == id })
}

func (r *registry) snapshot() []entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.jobs)
}
