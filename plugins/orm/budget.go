package orm

import (
	"sync"

	"github.com/sms-baseline/sms/contracts"
)

// readBudget is the estimated bytes all reads in flight may hold. A read
// takes its share as it loads rows and builds its answer and gives it
// back when done; a share that does not fit is refused, never waited
// for, so no caller's read can stall another's.
type readBudget struct {
	mu    sync.Mutex
	used  int64
	limit int64
}

func newReadBudget(limit int64) *readBudget {
	if limit <= 0 {
		limit = DefaultReadBudget
	}
	return &readBudget{limit: limit}
}

// take reserves n bytes, or reports that they do not fit.
func (b *readBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes taken earlier.
func (b *readBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// reserve takes n more bytes of the budget for r's read.
func (r *reader) reserve(model string, n int64) error {
	if n <= 0 {
		return nil
	}
	if !r.s.budget.take(n) {
		return errorf(ErrBusy, at{model, ""}, "the reads in flight hold the read budget; this read needs %d more bytes beside them; the limit is %d bytes in all, try again shortly",
			n, r.s.budget.limit)
	}
	r.held += n
	return nil
}

// release gives back every byte r's read holds.
func (r *reader) release() {
	r.s.budget.give(r.held)
	r.held = 0
}

// load counts rows loaded by r's read against MaxReadRecords and takes
// their estimated size from the budget.
func (r *reader) load(model string, rows []contracts.Row) error {
	if r.loaded += len(rows); r.loaded > MaxReadRecords {
		return errTooMany(model)
	}
	var n int64
	for _, row := range rows {
		n += 16
		for k, v := range row {
			n += int64(len(k)) + sizeOf(v)
		}
	}
	return r.reserve(model, n)
}

// sizeOf estimates the bytes a scalar takes, in memory or as JSON.
func sizeOf(v any) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x)) + 2
	case []byte:
		return int64(len(x)) + 2
	case nil:
		return 4
	}
	return 8
}

// weight is what an answer holds: its records, each time one appears,
// and its estimated size as JSON.
type weight struct{ records, bytes int64 }

// weigh adds v to w, stopping as soon as a bound is passed, so weighing
// costs no more than the bounds.
func (w *weight) weigh(v any) bool {
	switch x := v.(type) {
	case Record:
		if w.records++; w.records > MaxReadRecords {
			return false
		}
		w.bytes += 2
		for k, f := range x {
			if w.bytes += int64(len(k)) + 4; !w.weigh(f) {
				return false
			}
		}
	case []any:
		w.bytes += 2
		for _, e := range x {
			if w.bytes++; !w.weigh(e) {
				return false
			}
		}
	default:
		w.bytes += sizeOf(v)
	}
	return w.bytes <= MaxReadBytes
}

// check answers the bound w passed, if any.
func (w *weight) check(model string) error {
	if w.records > MaxReadRecords {
		return errTooMany(model)
	}
	if w.bytes > MaxReadBytes {
		return errorf(ErrInvalid, at{model, ""}, "the answer would hold more than %d bytes; the limit is %d bytes; read fewer ids or a shallower spec",
			MaxReadBytes, MaxReadBytes)
	}
	return nil
}

// checkSpecSize refuses a spec naming more than MaxSpecFields fields in
// all, before its names are checked.
func checkSpecSize(model string, spec ReadSpec) error {
	n := 0
	var count func(ReadSpec) bool
	count = func(s ReadSpec) bool {
		for _, sub := range s {
			if n++; n > MaxSpecFields || !count(sub) {
				return false
			}
		}
		return true
	}
	if !count(spec) {
		return errorf(ErrInvalid, at{model, ""}, "the read spec names at least %d fields; the limit is %d", n, MaxSpecFields)
	}
	return nil
}
