package kernel

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Options configure a kernel. Every field is optional.
type Options struct {
	// Name identifies the kernel in logs and state views.
	Name string
	// Log is the event log; the default is an in-memory log.
	Log EventLog
	// Blobs stores agent code by content hash; the default is in memory.
	Blobs BlobStore
	// Executor runs agent plugins. Without one, agent fibers fail to activate.
	Executor Executor
	// Logger receives the kernel's logs; the default discards them.
	Logger *slog.Logger
	// Now is the clock for event times; the default is time.Now.
	Now func() time.Time
	// Rand is the source of authorization nonces; the default is crypto/rand.
	Rand io.Reader
	// Fault, when set, is called at each fault point (FaultPoints, and those
	// system plugins name) with its name. Tests use it to stop the process
	// at a chosen step; production leaves it nil.
	Fault func(point string)
	// QuarantineAfter is how many activations of an agent plugin may fail
	// in a row (or stop the kernel's process) before it is quarantined;
	// default DefaultQuarantineAfter. See ErrUnitStopped for the failures
	// that quarantine at once.
	QuarantineAfter int
	// SafeMode boots with system plugins only: agent plugins are restored
	// into views but never activated, none can be mounted, and nothing is
	// written to the log on their behalf. Restarting without it brings
	// them back as the log has them.
	SafeMode bool
	// DrainGrace is how long a version a transition replaced keeps taking
	// calls from callers that matched it before the switch, and
	// DrainTimeout how long its calls may then run before its unit is
	// closed under them; defaults DefaultDrainGrace and DefaultDrainTimeout.
	DrainGrace, DrainTimeout time.Duration
	// Meter, when set, admits and accounts every call into agent code
	// and every service call agent code makes (budgets); nil admits all.
	Meter Meter
}

// Kernel is a plugin kernel. Its methods are safe for concurrent use: reads
// (views, GetValue, Has, Contributions) run concurrently; operations that
// change fibers are serialized.
type Kernel struct {
	name    string
	log     EventLog
	blobs   BlobStore
	exec    Executor
	logger  *slog.Logger
	now     func() time.Time
	rand    io.Reader
	faultFn func(string)

	quarantineN int
	safeMode    bool

	drainGrace, drainTimeout time.Duration
	meter                    Meter

	appended appendSignal // wakes readers waiting for the next event

	closed    chan struct{} // closed by Close: background restarts stop
	closeOnce sync.Once

	mu    sync.Mutex      // serializes operations that change fibers (they run plugin code)
	holds map[string]bool // agent ids whose disable holds, as the log folds them; guarded by mu

	reg       regMutex // guards everything below
	keys      map[string]*keyEntry
	points    map[string]*pointEntry
	fibers    map[string]*fiber
	order     []*fiber            // install order, for deterministic settling
	consumers map[string][]*fiber // key -> fibers that inject it
	systemIDs map[string]bool     // ids ever installed as system fibers
	issued    map[string]MountAuthorization
	used      map[string]bool
	trans     map[string]*transition   // each plugin's latest transition
	draining  map[string][]*activation // each plugin's activations still draining, oldest first
	taint     TaintSet
	seq       uint64
}

// New returns a kernel with no fibers.
func New(opts Options) *Kernel {
	k := &Kernel{
		name: opts.Name, log: opts.Log, blobs: opts.Blobs, exec: opts.Executor,
		logger: opts.Logger, now: opts.Now, rand: opts.Rand, faultFn: opts.Fault,
		quarantineN: opts.QuarantineAfter, safeMode: opts.SafeMode,
		drainGrace: opts.DrainGrace, drainTimeout: opts.DrainTimeout, meter: opts.Meter, trans: map[string]*transition{}, draining: map[string][]*activation{},
		keys: map[string]*keyEntry{}, points: map[string]*pointEntry{}, fibers: map[string]*fiber{},
		consumers: map[string][]*fiber{}, systemIDs: map[string]bool{}, holds: map[string]bool{},
		issued: map[string]MountAuthorization{}, used: map[string]bool{}, closed: make(chan struct{}),
	}
	if k.name == "" {
		k.name = "kernel"
	}
	if k.log == nil {
		k.log = NewMemoryLog()
	}
	if k.blobs == nil {
		k.blobs = NewMemoryBlobs()
	}
	if k.logger == nil {
		k.logger = slog.New(slog.DiscardHandler)
	}
	if k.now == nil {
		k.now = time.Now
	}
	if k.rand == nil {
		k.rand = rand.Reader
	}
	if k.drainGrace <= 0 {
		k.drainGrace = DefaultDrainGrace
	}
	if k.drainTimeout <= 0 {
		k.drainTimeout = DefaultDrainTimeout
	}
	return k
}

// Close stops the kernel's background work: a plugin whose sandbox stopped
// is no longer restarted, and the units of versions a transition replaced
// close now, under any calls still running there. Fibers stay as they are; the composition root
// closes what they hold. Close may be called more than once.
func (k *Kernel) Close() {
	k.closeOnce.Do(func() {
		close(k.closed)
		k.closeDrains()
	})
}

// Name returns the kernel's name.
func (k *Kernel) Name() string { return k.name }

// Taint sets a taint flag. It is sticky: nothing clears it.
func (k *Kernel) Taint(flag Taint) {
	k.reg.Lock()
	k.setTaintLocked(flag)
	k.reg.Unlock()
}

func (k *Kernel) setTaintLocked(flag Taint) {
	if !k.taint.Has(flag) {
		k.taint |= TaintSet(flag)
		k.logger.Warn("Kernel tainted", "kernel", k.name, "flag", flag.String(), "taint", k.taint.String())
	}
}

// Tainted returns the taint flags set so far.
func (k *Kernel) Tainted() TaintSet {
	k.reg.RLock()
	defer k.reg.RUnlock()
	return k.taint
}

// errf builds an *Error carrying the current taint flags.
func (k *Kernel) errf(code Code, op, fiber, msg string) *Error {
	k.reg.RLock()
	defer k.reg.RUnlock()
	return k.errfLocked(code, op, fiber, msg)
}

func (k *Kernel) errfLocked(code Code, op, fiber, msg string) *Error {
	e := kerr(code, op, fiber, msg)
	e.Taint = k.taint
	return e
}

// tag attaches the current taint to a kernel error built elsewhere.
func (k *Kernel) tag(err error) error {
	var e *Error
	if errors.As(err, &e) {
		e.Taint = k.Tainted()
	}
	return err
}

// opKey marks a context as running inside a kernel operation, so a plugin
// that calls a fiber-changing operation from its activation gets an error
// instead of a deadlock.
type opKey struct{}

// InOperation reports whether ctx runs inside one of k's fiber operations:
// an activation, an observer or an undo, which run under the operation
// lock. Code that would wait for another operation (a submission to the
// judge) checks it to fail at once instead of deadlocking.
func (k *Kernel) InOperation(ctx context.Context) bool { return ctx.Value(opKey{}) == k }

// SafeMode reports whether the kernel booted in safe mode (Options.SafeMode).
func (k *Kernel) SafeMode() bool { return k.safeMode }

// ErrSafeMode is why a kernel in safe mode refuses to mount agent plugins.
var ErrSafeMode = errors.New("the kernel runs in safe mode: it activates system plugins only and mounts no agent plugin until it restarts without safe mode")

// lock takes the operation lock, refusing re-entry from plugin code.
func (k *Kernel) lock(ctx context.Context, op string) (context.Context, error) {
	if k.InOperation(ctx) {
		return ctx, k.errf(CodeLifecycle, op, "", "fiber operations cannot be called from activation or observer code")
	}
	if err := ctx.Err(); err != nil {
		return ctx, err
	}
	k.mu.Lock()
	return context.WithValue(ctx, opKey{}, k), nil
}

// Fiber returns a view of the fiber with the given id.
func (k *Kernel) Fiber(id string) (FiberView, bool) {
	k.reg.RLock()
	defer k.reg.RUnlock()
	f := k.fibers[id]
	if f == nil {
		return FiberView{}, false
	}
	return k.view(f), true
}

// Fibers returns views of every fiber in install order.
func (k *Kernel) Fibers() []FiberView {
	k.reg.RLock()
	defer k.reg.RUnlock()
	out := make([]FiberView, 0, len(k.order))
	for _, f := range k.order {
		out = append(out, k.view(f))
	}
	return out
}
