package isolated

import (
	"errors"
	"fmt"
	"sync"

	"github.com/sms-baseline/sms/kernel"
)

// Defaults for the bounds on an executor's children in total.
const (
	// DefaultMaxChildren bounds the sandbox processes one executor (one
	// kernel) keeps alive at once, warm ones included.
	DefaultMaxChildren = 32
	// DefaultMaxChildrenPerRequester bounds the units loaded for one
	// requester (kernel.RequesterOf) at once.
	DefaultMaxChildrenPerRequester = 16
	// DefaultMemoryBudget bounds the memory limits (Options.MemoryLimit)
	// that live children commit together: 32 children at the default
	// limit.
	DefaultMemoryBudget = DefaultMaxChildren * DefaultMemoryLimit
)

// ErrLimit is wrapped by the error of a Load refused because a bound on
// the children in total (MaxChildren, MaxChildrenPerRequester,
// MemoryBudget) would be passed. Its kernel.Error has CodeConflict.
var ErrLimit = errors.New("sandbox limit reached")

// budget counts an executor's live children against its bounds: how many
// there are, how many were loaded for each requester, and the memory limits
// they commit. Safe for concurrent use.
type budget struct {
	max, perRequester int
	memory, each      int64 // the budget, and what one child commits

	mu   sync.Mutex
	live int
	by   map[string]int // units loaded per requester; "" is not counted
}

func newBudget(opts Options) *budget {
	return &budget{max: opts.MaxChildren, perRequester: opts.MaxChildrenPerRequester,
		memory: opts.MemoryBudget, each: opts.MemoryLimit, by: map[string]int{}}
}

// room returns how many more children may start now.
func (b *budget) room() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(min(b.max-b.live, int(b.memory/b.each)-b.live), 0)
}

// startChild counts a child about to start, or refuses with the bound it
// would pass. plugin names the unit it is for ("" for the warm pool).
func (b *budget) startChild(plugin string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.live >= b.max:
		return refusal(plugin, fmt.Sprintf("the kernel already runs %d sandbox processes, its limit (MaxChildren)", b.live))
	case int64(b.live+1)*b.each > b.memory:
		return refusal(plugin, fmt.Sprintf("another sandbox process would commit more than the memory budget of %d MiB "+
			"(MemoryBudget): %d run with a limit of %d MiB each", b.memory>>20, b.live, b.each>>20))
	}
	b.live++
	return nil
}

// endChild gives back what startChild counted.
func (b *budget) endChild() {
	b.mu.Lock()
	b.live--
	b.mu.Unlock()
}

// attribute counts a unit loaded for who, or refuses past the bound per
// requester. A load nobody asked for (who is "") counts only in total.
func (b *budget) attribute(plugin, who string) error {
	if who == "" {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by[who] >= b.perRequester {
		return refusal(plugin, fmt.Sprintf("%q already holds %d sandbox processes, the limit per requester (MaxChildrenPerRequester)", who, b.by[who]))
	}
	b.by[who]++
	return nil
}

// over returns who when who is at the bound per requester, so that
// only one of who's children frees a place for who; otherwise "".
func (b *budget) over(who string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if who != "" && b.by[who] >= b.perRequester {
		return who
	}
	return ""
}

// unattribute gives back what attribute counted.
func (b *budget) unattribute(who string) {
	if who == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by[who]--; b.by[who] <= 0 {
		delete(b.by, who)
	}
}

func refusal(plugin, msg string) error {
	return &kernel.Error{Code: kernel.CodeConflict, Op: "load", Fiber: plugin, Message: msg, Err: ErrLimit}
}

// lease is one child's place in the budget, given back once: when the
// child is closed or exits, whichever comes first.
type lease struct {
	b     *budget
	mu    sync.Mutex
	who   string // the requester its unit was loaded for, once claimed
	given bool
}

// claim makes the lease carry who's place, which attribute counted. A
// lease already given back gives it back at once.
func (l *lease) claim(who string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.given {
		l.b.unattribute(who)
		return
	}
	l.who = who
}

// give gives the child's place back; later calls do nothing.
func (l *lease) give() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.given {
		return
	}
	l.given = true
	l.b.endChild()
	l.b.unattribute(l.who)
}

// Live reports how many sandbox processes the executor counts now (warm
// ones included): started, and neither closed nor exited.
func (e *Executor) Live() int {
	e.budget.mu.Lock()
	defer e.budget.mu.Unlock()
	return e.budget.live
}
