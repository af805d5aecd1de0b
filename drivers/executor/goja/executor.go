package goja

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	js "github.com/dop251/goja"

	"github.com/sms-baseline/sms/contracts/agentsource"
	"github.com/sms-baseline/sms/kernel"
)

// Defaults for Options.
const (
	DefaultDeadline         = 5 * time.Second
	DefaultGrace            = time.Second
	DefaultMaxCallStackSize = 1024
	DefaultMaxSourceBytes   = agentsource.DefaultMaxBytes
	DefaultMaxSourceNesting = agentsource.DefaultMaxNesting
	DefaultMaxHostCalls     = 10000
	DefaultMaxHostInFlight  = 64
	DefaultMaxHostBytes     = 64 << 20
)

// ErrDeadline is wrapped by the error of an activation or call that did not
// finish within Options.Deadline.
var ErrDeadline = errors.New("deadline exceeded")

// ErrClosed is wrapped by the error of every call on a closed unit.
var ErrClosed = errors.New("the unit is closed")

// Options configure an Executor. Every field is optional.
type Options struct {
	// Deadline bounds each activation and each call, including the host
	// calls it awaits; JavaScript still running when it passes is
	// interrupted. Default DefaultDeadline.
	Deadline time.Duration
	// Grace is how long JavaScript may keep running after it was
	// interrupted (goja cannot interrupt a built-in such as a regular
	// expression match) before OnStuck is called. Default DefaultGrace.
	Grace time.Duration
	// OnStuck is called, from a timer goroutine, when interrupted JavaScript
	// has not stopped within Grace. The isolated executor's child exits
	// there; in process nothing can stop it, so the default logs an error.
	OnStuck func(plugin string)
	// MaxCallStackSize bounds JavaScript call depth. Default DefaultMaxCallStackSize.
	MaxCallStackSize int
	// MaxSourceBytes and MaxSourceNesting bound the code Load accepts.
	MaxSourceBytes   int
	MaxSourceNesting int
	// MaxHostCalls and MaxHostBytes bound what one activation or one call
	// may ask of the host through the bridge: cap calls made, and bytes
	// crossing either way. Past either the JavaScript is interrupted and
	// the call fails, so a flood of cap calls fails its call instead of
	// growing the process. MaxHostInFlight bounds the unit's cap calls
	// running at once, across its calls; more wait their turn. Defaults
	// DefaultMaxHostCalls, DefaultMaxHostBytes and DefaultMaxHostInFlight.
	MaxHostCalls    int
	MaxHostInFlight int
	MaxHostBytes    int64
	// Now is the source of Date; Rand the source of Math.random. Tests pass
	// fixed ones. Defaults: time.Now and math/rand/v2.
	Now  func() time.Time
	Rand func() float64
	// Logger receives the executor's own errors. Default: discarded.
	Logger *slog.Logger
	// Driven leaves a unit without a goroutine of its own: its JavaScript
	// runs only on goroutines that call Starter.Drive (or wait in Activate
	// and Call), so whoever starts a job with the Starter methods or
	// answers a host call of an AsyncHost must call Drive after. The
	// isolated executor's child sets it: its one reader goroutine then
	// runs every slice, and no wake-up crosses threads.
	Driven bool
}

func (o Options) withDefaults() Options {
	if o.Deadline <= 0 {
		o.Deadline = DefaultDeadline
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.MaxCallStackSize <= 0 {
		o.MaxCallStackSize = DefaultMaxCallStackSize
	}
	if o.MaxSourceBytes <= 0 {
		o.MaxSourceBytes = DefaultMaxSourceBytes
	}
	if o.MaxSourceNesting <= 0 {
		o.MaxSourceNesting = DefaultMaxSourceNesting
	}
	if o.MaxHostCalls <= 0 {
		o.MaxHostCalls = DefaultMaxHostCalls
	}
	if o.MaxHostInFlight <= 0 {
		o.MaxHostInFlight = DefaultMaxHostInFlight
	}
	if o.MaxHostBytes <= 0 {
		o.MaxHostBytes = DefaultMaxHostBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.OnStuck == nil {
		logger := o.Logger
		o.OnStuck = func(plugin string) {
			logger.Error("Agent code did not stop after its deadline", "plugin", plugin)
		}
	}
	return o
}

// Limits returns the source limits the options imply.
func (o Options) Limits() agentsource.Limits {
	o = o.withDefaults()
	return agentsource.Limits{MaxBytes: o.MaxSourceBytes, MaxNesting: o.MaxSourceNesting}
}

// cacheSize bounds the compiled-program cache; past it the cache starts over.
const cacheSize = 256

// Executor runs agent plugins in process, one goja runtime per unit. It is
// safe for concurrent use.
type Executor struct {
	opts Options

	mu    sync.Mutex
	cache map[string]*js.Program // compiled code by hash; programs are immutable and shareable
}

// New returns an executor with the given options.
func New(opts Options) *Executor {
	return &Executor{opts: opts.withDefaults(), cache: map[string]*js.Program{}}
}

// Load implements kernel.Executor: it checks and compiles the code; nothing
// runs until Activate.
func (e *Executor) Load(ctx context.Context, b kernel.Bundle) (kernel.Unit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prg, err := e.program(b)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", b.Manifest.ID, err)
	}
	u, err := newUnit(b.Manifest.ID, prg, e.opts)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", b.Manifest.ID, err)
	}
	return u, nil
}

func (e *Executor) program(b kernel.Bundle) (*js.Program, error) {
	// Hashed here rather than trusting b.CodeHash: a wrong hash must never
	// select another plugin's compiled program.
	hash := kernel.HashCode(b.Code)
	e.mu.Lock()
	prg := e.cache[hash]
	e.mu.Unlock()
	if prg != nil {
		return prg, nil
	}
	prg, err := Compile(string(b.Code), e.opts.Limits())
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if len(e.cache) >= cacheSize {
		clear(e.cache)
	}
	e.cache[hash] = prg
	e.mu.Unlock()
	return prg, nil
}
