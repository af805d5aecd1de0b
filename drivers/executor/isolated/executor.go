package isolated

import (
	"context"
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
	// Command starts a child: the program and its arguments. Default: this
	// program with the argument "sandbox" (the hidden `manager sandbox`).
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
	// WarmIdle is how long the pool stays warm after the last Load.
	// Default DefaultWarmIdle.
	WarmIdle time.Duration
}

// Executor runs each agent plugin's unit in its own child process. It is
// safe for concurrent use.
type Executor struct {
	opts    Options
	pool    *pool
	command []string
	env     []string
	config  config
	wait    time.Duration // how long a request may go unanswered before the child is killed
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
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the sandbox program: %w", err)
		}
		command = []string{self, "sandbox"}
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
	}, opts.Env...)
	if opts.WarmIdle <= 0 {
		opts.WarmIdle = DefaultWarmIdle
	}
	e := &Executor{
		opts: opts, command: command, env: env,
		config: config{Deadline: deadline, Grace: grace, MaxCallStackSize: rt.MaxCallStackSize,
			MaxSourceBytes: lim.MaxBytes, MaxSourceNesting: lim.MaxNesting},
		// The child answers every request by its own deadline, even when
		// its JavaScript is stuck; one that does not is frozen.
		wait: deadline + 2*grace,
	}
	e.pool = &pool{e: e, want: opts.Warm, idle: opts.WarmIdle, refillIn: refillAfter}
	return e, nil
}

// Load implements kernel.Executor: it starts a child and has it compile the
// code. A failure to start or to compile closes the child.
func (e *Executor) Load(ctx context.Context, b kernel.Bundle) (kernel.Unit, error) {
	if u := e.pool.take(); u != nil {
		u.claim(b.Manifest.ID)
		died, err := e.load(ctx, u, b)
		if err == nil {
			return u, nil
		}
		if !died {
			return nil, err
		}
		// The pooled child died while it waited: start one.
	}
	u, err := e.start(b.Manifest.ID)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", b.Manifest.ID, err)
	}
	if _, err := e.load(ctx, u, b); err != nil {
		return nil, err
	}
	return u, nil
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

func (e *Executor) start(plugin string) (*unit, error) {
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
		plugin: plugin, cmd: cmd, stdin: stdin, stdout: stdout, stderr: stderr, conn: conn, tail: &stderrTail{},
		wait: e.wait, logger: e.opts.Logger, pending: map[uint64]*request{}, exited: make(chan struct{}),
		slots: make(chan struct{}, serveAtOnce), lead: make(chan struct{}, 1),
	}
	go u.watch(stderr)
	return u, nil
}
