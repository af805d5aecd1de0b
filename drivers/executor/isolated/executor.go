package isolated

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/kernel"
)

// Defaults for Options.
const (
	DefaultMemoryLimit = 512 << 20
	DefaultCPULimit    = 10 * time.Minute
)

// Options configure an Executor. Every field is optional.
type Options struct {
	// Command starts a child: the program and its arguments. Default
	// (DefaultCommand): the program sms-sandbox beside this one when there
	// is one, otherwise this program with the argument "sandbox" (the
	// hidden subcommand of `manager` and of kernelcmd's binaries).
	Command []string
	// Env is the child's whole environment besides its limits; it inherits
	// nothing else from the parent, whose secrets stay there.
	Env []string
	// MemoryLimit is the address space a child may map beyond its own
	// baseline (RLIMIT_AS). Default DefaultMemoryLimit.
	MemoryLimit int64
	// CPULimit is the CPU time a child may use over its whole life
	// (RLIMIT_CPU); a unit lives as long as its fiber's activation. Default
	// DefaultCPULimit.
	CPULimit time.Duration
	// Runtime configures the runtime in the child: its deadline, grace,
	// stack and source limits. Now, Rand, OnStuck and Logger stay in the
	// parent and are ignored.
	Runtime goja.Options
	// Logger receives what children write to stderr. Default: discarded.
	Logger *slog.Logger
	// Warm is how many children are kept started ahead of need, so that
	// Load (the judge's load gate, a mount) does not wait for a process to
	// start. The pool fills on the first Load and empties after WarmIdle
	// without one, so an idle kernel keeps none. Default 0: every Load
	// starts its child.
	Warm int
	// IdleAfter is how long a mounted plugin's child lives without a call
	// before it exits, giving back its memory and its place among
	// MaxChildren; the plugin's next call starts a child again, which
	// compiles the code and replays the first activation (see the package
	// documentation). Default DefaultIdleAfter; negative keeps every
	// child while its plugin is mounted.
	IdleAfter time.Duration
	// WarmIdle is how long the pool stays warm after the last Load.
	// Default DefaultWarmIdle.
	WarmIdle time.Duration
	// MaxChildren bounds the sandbox processes alive at once, warm ones
	// and the judge's trial units included; past it Load is refused with
	// ErrLimit, and the pool keeps fewer warm. Default DefaultMaxChildren.
	MaxChildren int
	// MaxChildrenPerRequester bounds the units loaded at once for one
	// requester, whom the load's context names (kernel.RequesterOf: the
	// judge names who submitted the plugin). Loads that name nobody (a
	// restore) count only in total. Default DefaultMaxChildrenPerRequester.
	MaxChildrenPerRequester int
	// MaxUnits bounds the units loaded at once, awake or asleep: the
	// mounted agent plugins and the judge's trial units. A sleeping
	// plugin holds its code and the record of its activation in the
	// kernel's memory, so children alone no longer bound them. Default
	// DefaultMaxUnits.
	MaxUnits int
	// MaxUnitsPerRequester bounds the units loaded at once for one
	// requester; loads that name nobody count only in total. Default
	// DefaultMaxUnitsPerRequester.
	MaxUnitsPerRequester int
	// MemoryBudget bounds the sum of the memory limits (MemoryLimit) of
	// the children alive at once. Set it to what the kernel's pod can give
	// its children, its memory limit less the kernel's own, so that the
	// pod's limit is never what stops a child. Default DefaultMemoryBudget.
	MemoryBudget int64
}

// Executor runs each agent plugin's unit in its own child process. It is
// safe for concurrent use.
type Executor struct {
	opts     Options
	pool     *pool
	budget   *budget
	sleepers sleepers
	spares   spares
	command  []string
	env      []string
	config   config
	wait     time.Duration // how long a request may go unanswered before the child is killed
	// deadlineErr is the cause of a host call's context ending at its
	// job's deadline, worded as the runtime words the job's own failure.
	deadlineErr error
}

// New returns an executor with the given options.
func New(opts Options) (*Executor, error) {
	if opts.MemoryLimit <= 0 {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	if opts.CPULimit <= 0 {
		opts.CPULimit = DefaultCPULimit
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	command := opts.Command
	if len(command) == 0 {
		var err error
		if command, err = DefaultCommand(); err != nil {
			return nil, err
		}
	}
	rt := opts.Runtime
	lim := rt.Limits()
	deadline, grace := rt.Deadline, rt.Grace
	if deadline <= 0 {
		deadline = goja.DefaultDeadline
	}
	if grace <= 0 {
		grace = goja.DefaultGrace
	}
	env := append([]string{
		EnvMemoryLimit + "=" + strconv.FormatInt(opts.MemoryLimit, 10),
		EnvCPULimit + "=" + opts.CPULimit.String(),
		EnvProtocol + "=" + Protocol,
	}, opts.Env...)
	opts.withBounds()
	e := &Executor{
		opts: opts, command: command, env: env,
		config: config{Deadline: deadline, Grace: grace, MaxCallStackSize: rt.MaxCallStackSize,
			MaxSourceBytes: lim.MaxBytes, MaxSourceNesting: lim.MaxNesting},
		// The child answers every request by its own deadline, even when
		// its JavaScript is stuck; one that does not is frozen.
		wait:        deadline + 2*grace,
		deadlineErr: fmt.Errorf("JavaScript did not finish within %s: %w", deadline, goja.ErrDeadline),
	}
	e.pool = &pool{e: e, want: opts.Warm, idle: opts.WarmIdle, refillIn: refillAfter}
	e.budget = newBudget(opts)
	return e, nil
}

// withBounds fills in the defaults of the pool's and the budget's options.
func (o *Options) withBounds() {
	if o.IdleAfter == 0 {
		o.IdleAfter = DefaultIdleAfter
	}
	if o.WarmIdle <= 0 {
		o.WarmIdle = DefaultWarmIdle
	}
	if o.MaxChildren <= 0 {
		o.MaxChildren = DefaultMaxChildren
	}
	if o.MaxChildrenPerRequester <= 0 {
		o.MaxChildrenPerRequester = DefaultMaxChildrenPerRequester
	}
	if o.MaxUnits <= 0 {
		o.MaxUnits = DefaultMaxUnits
	}
	if o.MaxUnitsPerRequester <= 0 {
		o.MaxUnitsPerRequester = DefaultMaxUnitsPerRequester
	}
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = DefaultMemoryBudget
	}
}

// Load implements kernel.Executor: it starts a child, or takes a warm one,
// and has it compile the code. A failure to start or to compile closes the
// child. A load past MaxUnits or MaxUnitsPerRequester is refused with a
// kernel.Error (CodeConflict) that wraps ErrLimit and names the bound. A
// load that would pass MaxChildren, MaxChildrenPerRequester or
// MemoryBudget first puts to sleep the idle plugin whose child was used
// least recently (see IdleAfter), and is refused with a kernel.Error
// (CodeConflict) that wraps ErrLimit and names the bound when no plugin
// is idle.
func (e *Executor) Load(ctx context.Context, b kernel.Bundle) (kernel.Unit, error) {
	who := kernel.RequesterOf(ctx)
	p, err := e.sleepers.admit(e, b, who)
	if err != nil {
		return nil, err
	}
	p.trial = kernel.IsTrial(ctx)
	u, err := e.loaded(ctx, b, who)
	if err != nil {
		e.sleepers.remove(p)
		return nil, err
	}
	p.mu.Lock()
	p.child = u
	p.mu.Unlock()
	return p, nil
}

// loaded returns a child for b that has compiled its code, counted for
// who.
func (e *Executor) loaded(ctx context.Context, b kernel.Bundle, who string) (*unit, error) {
	for {
		u, err := e.child(b, who)
		if err != nil {
			return nil, err
		}
		died, err := e.load(ctx, u, b)
		if err == nil {
			return u, nil
		}
		if !died || !u.pooled {
			return nil, err
		}
		// The pooled or spare child died while it waited: start one.
	}
}

// child returns a started child claimed for plugin id and requester who:
// a warm one when the pool has one. At a bound it puts an idle plugin to
// sleep (one of who's at the bound per requester) and tries again.
func (e *Executor) child(b kernel.Bundle, who string) (*unit, error) {
	id := b.Manifest.ID
	if u := e.spares.take(b, who); u != nil {
		return u, nil // its lease carries who's place already
	}
	for {
		err := e.budget.attribute(id, who)
		if err == nil {
			// From here on who's place is the lease's once a child carries
			// it: closing the child gives it back.
			u := e.pool.take()
			if u == nil {
				if u, err = e.start(id); err != nil {
					e.budget.unattribute(who)
				}
			}
			if err == nil {
				u.claim(id, who)
				return u, nil
			}
		}
		if !errors.Is(err, ErrLimit) {
			return nil, fmt.Errorf("load %s: %w", id, err)
		}
		if !e.spares.drop() && !e.sleepers.evict(e.budget.over(who)) {
			return nil, err
		}
	}
}

// load has u's child compile the code; a failure closes the child, and
// died tells whether the child was gone before that.
func (e *Executor) load(ctx context.Context, u *unit, b kernel.Bundle) (died bool, err error) {
	cfg := e.config
	if _, err := u.request(ctx, message{Op: opLoad, Plugin: b.Manifest.ID, Text: string(b.Code), Config: &cfg}); err != nil {
		died = u.deadErr() != nil
		_ = u.Close()
		return died, err
	}
	return false, nil
}

// start starts a child for plugin ("" for the pool), counted in the
// budget until it is closed or exits.
func (e *Executor) start(plugin string) (*unit, error) {
	if err := e.budget.startChild(plugin); err != nil {
		return nil, err
	}
	u, err := e.spawn(plugin)
	if err != nil {
		e.budget.endChild()
		return nil, err
	}
	return u, nil
}

func (e *Executor) spawn(plugin string) (*unit, error) {
	cmd := exec.Command(e.command[0], e.command[1:]...)
	cmd.Env = e.env
	// Stdin and stdout are pipes of our own: stdin is written with a
	// deadline, stdout read with deadlines by whichever request leads.
	in, stdin, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start sandbox: %w", err)
	}
	cmd.Stdin = in
	stderr, err := cmd.StderrPipe()
	if err != nil {
		_, _ = in.Close(), stdin.Close()
		return nil, fmt.Errorf("start sandbox: %w", err)
	}
	stdout, w, err := os.Pipe()
	if err != nil {
		_, _, _ = in.Close(), stdin.Close(), stderr.Close()
		return nil, fmt.Errorf("start sandbox: %w", err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	_, _ = in.Close(), w.Close()
	if err != nil {
		_, _ = stdin.Close(), stdout.Close()
		return nil, fmt.Errorf("start sandbox %s: %w", e.command[0], err)
	}
	conn := newConn(stdout, stdin)
	conn.writeWait = e.wait
	u := &unit{
		pooled: plugin == "", plugin: plugin, cmd: cmd, stdin: stdin, stdout: stdout, stderr: stderr, conn: conn, tail: &stderrTail{},
		wait: e.wait, logger: e.opts.Logger, pending: map[uint64]*request{}, exited: make(chan struct{}),
		deadline: e.config.Deadline, deadlineErr: e.deadlineErr, lease: &lease{b: e.budget},
		slots: make(chan struct{}, serveAtOnce), lead: make(chan struct{}, 1),
	}
	go u.watch(stderr)
	return u, nil
}
