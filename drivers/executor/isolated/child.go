package isolated

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/kernel"
)

// Environment variables through which the parent passes the child's limits.
// The child inherits no other environment.
const (
	EnvMemoryLimit = "SMS_SANDBOX_MEMORY_LIMIT" // bytes of address space over the child's baseline
	EnvCPULimit    = "SMS_SANDBOX_CPU_LIMIT"    // a Go duration, e.g. "10m"
)

// Exit codes of a child that ends itself.
const (
	ExitCPULimit = 3 // RLIMIT_CPU's soft limit was reached
	ExitStuck    = 4 // JavaScript did not stop within the grace after its deadline
)

// ChildOptions configure the child side of the sandbox.
type ChildOptions struct {
	// MemoryLimit is the address space, in bytes, the child may map beyond
	// what it has mapped when it applies its limits (RLIMIT_AS).
	MemoryLimit int64
	// CPULimit is the CPU time the child may use over its life (RLIMIT_CPU).
	CPULimit time.Duration
	// Stderr receives the child's last words; Exit ends it. Defaults:
	// os.Stderr and os.Exit. Tests replace them.
	Stderr io.Writer
	Exit   func(code int)
}

// ChildOptionsFromEnv reads the limits the parent passed, falling back to
// the executor's defaults.
func ChildOptionsFromEnv() (ChildOptions, error) {
	o := ChildOptions{MemoryLimit: DefaultMemoryLimit, CPULimit: DefaultCPULimit}
	if err := checkProtocol(); err != nil {
		return o, err
	}
	if s := os.Getenv(EnvMemoryLimit); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("%s=%q is not a positive number of bytes", EnvMemoryLimit, s)
		}
		o.MemoryLimit = n
	}
	if s := os.Getenv(EnvCPULimit); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < time.Second {
			return o, fmt.Errorf("%s=%q is not a duration of at least 1s", EnvCPULimit, s)
		}
		o.CPULimit = d
	}
	return o, nil
}

// ServeChild is the child process: it applies its OS limits before reading
// anything, then serves one unit over in and out until in closes. It
// returns nil when the parent closes the pipe.
func ServeChild(ctx context.Context, in io.Reader, out io.Writer, opts ChildOptions) error {
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Exit == nil {
		opts.Exit = os.Exit
	}
	// The child runs one single-threaded runtime on one goroutine: a second
	// processor would only add thread wake-ups to every crossing, and
	// memory.
	runtime.GOMAXPROCS(1)
	if err := applyLimits(opts); err != nil {
		return fmt.Errorf("apply limits: %w", err)
	}
	c := &child{conn: newConn(in, newSpool(out)), opts: opts, asks: map[uint64]func(message){}, jobs: map[uint64]context.CancelFunc{}}
	for {
		m, err := c.conn.recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		c.handle(ctx, m)
	}
}

// child serves one unit on one goroutine: the reader. Every activation and
// call is started from it, and after each message it drives the unit's
// JavaScript itself until none is left to run (the unit is goja.Options.Driven),
// so no message waits for another thread to wake. Host calls made on a job's
// behalf are tagged with the parent's request id, which the job's context
// carries. A cancellation is read between slices; a slice is bounded by the
// runtime's deadline.
type child struct {
	conn *conn
	opts ChildOptions

	mu       sync.Mutex
	exec     *goja.Executor // made by the first Load, for execCfg
	execCfg  config
	unit     goja.Starter
	nextID   uint64
	asks     map[uint64]func(message)      // host calls awaiting the parent's answer
	jobs     map[uint64]context.CancelFunc // running activations and calls
	batching bool                          // the reader is handling a message: hold what is sent
	outbox   []message

	// order is held from taking the outbox until it is written, so a
	// message sent meanwhile from a timer cannot overtake the batch.
	order sync.Mutex
}

type jobKey struct{}

// handle dispatches one message of the parent and drives the JavaScript it
// starts; what the child says meanwhile goes out in one write at the end.
func (c *child) handle(ctx context.Context, m message) {
	c.mu.Lock()
	c.batching = true
	c.mu.Unlock()
	c.dispatch(ctx, m)
	c.mu.Lock()
	u := c.unit
	c.mu.Unlock()
	if u != nil {
		u.Drive()
	}
	c.order.Lock()
	defer c.order.Unlock()
	c.mu.Lock()
	out := c.outbox
	c.outbox, c.batching = nil, false
	for i := range out {
		if out[i].Op != "" && out[i].Op != opLog {
			out[i].Live = len(c.asks)
		}
	}
	c.mu.Unlock()
	if len(out) > 0 {
		// A failed write means the parent is gone; the read loop ends on EOF.
		_ = c.conn.sendAll(out)
	}
}

func (c *child) dispatch(ctx context.Context, m message) {
	switch {
	case m.Reply != 0:
		c.mu.Lock()
		answer := c.asks[m.Reply]
		delete(c.asks, m.Reply)
		c.mu.Unlock()
		if answer != nil {
			answer(m)
		}
	case m.Op == opLoad:
		c.reply(c.load(ctx, m))
	case m.Op == opWarm:
		c.reply(failure(message{Reply: m.ID}, c.warm(ctx)))
	case m.Op == opReset:
		c.reset()
		c.reply(message{Reply: m.ID})
	case m.Op == opActivate || m.Op == opCall:
		c.start(ctx, m)
	case m.Op == opCancel:
		c.mu.Lock()
		if cancel := c.jobs[m.ID]; cancel != nil {
			cancel()
		}
		c.mu.Unlock()
	default:
		c.reply(failure(message{Reply: m.ID}, fmt.Errorf("unknown operation %q", m.Op)))
	}
}

// start begins an activation or a call; the reply goes out when it ends.
func (c *child) start(ctx context.Context, m message) {
	c.mu.Lock()
	u := c.unit
	c.mu.Unlock()
	if u == nil {
		c.reply(failure(message{Reply: m.ID}, errors.New("no code was loaded")))
		return
	}
	jctx, cancel := context.WithCancel(context.WithValue(ctx, jobKey{}, m.ID))
	c.mu.Lock()
	c.jobs[m.ID] = cancel
	c.mu.Unlock()
	if m.Op == opActivate {
		u.StartActivate(jctx, c, func(err error) {
			c.endJob(m.ID)
			c.reply(failure(message{Reply: m.ID}, err))
		})
		return
	}
	u.StartCall(jctx, m.Name, m.Data, func(data json.RawMessage, err error) {
		c.endJob(m.ID)
		c.reply(failure(message{Reply: m.ID, Data: data}, err))
	})
}

func (c *child) load(ctx context.Context, m message) message {
	r := message{Reply: m.ID}
	if m.Config == nil {
		return failure(r, errors.New("load without a configuration"))
	}
	code := []byte(m.Text)
	u, err := c.runtime(*m.Config).Load(ctx, kernel.Bundle{Manifest: kernel.Manifest{ID: m.Plugin}, Code: code, CodeHash: kernel.HashCode(code)})
	if err != nil {
		return failure(r, err)
	}
	starter, ok := u.(goja.Starter)
	if !ok {
		_ = u.Close()
		return failure(r, fmt.Errorf("the runtime's unit %T cannot be driven", u))
	}
	c.reset() // a spare child drops the unit it served before
	c.mu.Lock()
	c.unit = starter
	c.mu.Unlock()
	return r
}

// runtime returns the child's goja executor for cfg, made on the first
// Load. A spare child loads the same code a second time (see spares), and
// the executor's cache of compiled programs spares it the second compile.
func (c *child) runtime(cfg config) *goja.Executor {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exec != nil && c.execCfg == cfg {
		return c.exec
	}
	opts := cfg.options()
	opts.Driven = true
	opts.OnStuck = func(plugin string) {
		_, _ = fmt.Fprintf(c.opts.Stderr, "sandbox: %s kept running a built-in past its deadline; exiting\n", plugin)
		c.opts.Exit(ExitStuck)
	}
	c.exec, c.execCfg = goja.New(opts), cfg
	return c.exec
}

// reset closes the unit the child serves, if any, and ends its jobs, so
// that nothing of it runs again: the parent keeps the child as a spare
// for the same code (see spares) and may load that code again.
func (c *child) reset() {
	c.mu.Lock()
	u := c.unit
	c.unit = nil
	jobs := c.jobs
	c.jobs = map[uint64]context.CancelFunc{}
	c.asks = map[uint64]func(message){} // a late answer to the old unit is ignored
	c.mu.Unlock()
	for _, cancel := range jobs {
		cancel()
	}
	if closer, ok := u.(interface{ Close() error }); ok {
		_ = closer.Close()
	}
}

// endJob releases the context of a finished activation or call.
func (c *child) endJob(id uint64) {
	c.mu.Lock()
	if cancel := c.jobs[id]; cancel != nil {
		cancel()
	}
	delete(c.jobs, id)
	c.mu.Unlock()
}

func (c *child) reply(m message) {
	// A failed write means the parent is gone; the read loop ends on EOF.
	_ = c.write(m)
}

// write sends m now, or holds it for the end of the message the reader is
// handling, so that everything keeps its order.
func (c *child) write(m message) error {
	c.mu.Lock()
	if c.batching {
		c.outbox = append(c.outbox, m)
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	c.order.Lock()
	defer c.order.Unlock()
	return c.conn.send(m)
}

// send sends a host call to the parent; answer receives the reply.
func (c *child) send(ctx context.Context, m message, answer func(message)) error {
	c.mu.Lock()
	c.nextID++
	m.ID = c.nextID
	c.asks[m.ID] = answer
	c.mu.Unlock()
	m.Job, _ = ctx.Value(jobKey{}).(uint64)
	if err := c.write(m); err != nil {
		c.mu.Lock()
		delete(c.asks, m.ID)
		c.mu.Unlock()
		return err
	}
	return nil
}

// ask sends a host call to the parent and waits for its answer.
func (c *child) ask(ctx context.Context, m message) (message, error) {
	ch := make(chan message, 1)
	if err := c.send(ctx, m, func(r message) { ch <- r }); err != nil {
		return message{}, err
	}
	select {
	case r := <-ch:
		return r, errorOf(r)
	case <-ctx.Done():
		return message{}, ctx.Err()
	}
}

// StartHost implements goja.AsyncHost: the unit's goroutine sends the call,
// and the reader delivers the answer; nobody waits in between.
func (c *child) StartHost(ctx context.Context, call goja.HostCall, done func(json.RawMessage, error)) {
	m := message{Op: call.Op, Name: call.Name, Method: call.Method, Data: call.Data}
	err := c.send(ctx, m, func(r message) {
		if err := errorOf(r); err != nil {
			done(nil, err)
			return
		}
		if call.Op == opContribute {
			id, err := json.Marshal(r.Text)
			done(id, err)
			return
		}
		done(r.Data, nil)
	})
	if err != nil {
		done(nil, err)
	}
}

// The child is its unit's kernel.HostBridge: every method asks the parent,
// whose HostBridge does the checking.

func (c *child) Get(ctx context.Context, key string) (json.RawMessage, error) {
	r, err := c.ask(ctx, message{Op: opGet, Name: key})
	return r.Data, err
}

func (c *child) Invoke(ctx context.Context, key, method string, args json.RawMessage) (json.RawMessage, error) {
	r, err := c.ask(ctx, message{Op: opInvoke, Name: key, Method: method, Data: args})
	return r.Data, err
}

func (c *child) Provide(ctx context.Context, key string, value json.RawMessage) error {
	_, err := c.ask(ctx, message{Op: opProvide, Name: key, Data: value})
	return err
}

func (c *child) Contribute(ctx context.Context, point string, item json.RawMessage) (string, error) {
	r, err := c.ask(ctx, message{Op: opContribute, Name: point, Data: item})
	return r.Text, err
}

func (c *child) Log(ctx context.Context, level, msg string) {
	job, _ := ctx.Value(jobKey{}).(uint64)
	_ = c.write(message{Op: opLog, Job: job, Level: level, Text: msg})
}

// ServeChildIf makes a program its own sandbox child: when the environment
// variable env is "1" it serves one unit on stdin and stdout with the
// limits the parent passed (ServeChild) and exits; otherwise it returns at
// once. A test binary calls it first in TestMain and gives the executor
// Options{Command: []string{os.Args[0]}, Env: []string{env + "=1"}}.
func ServeChildIf(env string) {
	if os.Getenv(env) != "1" {
		return
	}
	opts, err := ChildOptionsFromEnv()
	if err == nil {
		err = ServeChild(context.Background(), os.Stdin, os.Stdout, opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
