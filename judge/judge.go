package judge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// DefaultGateTimeout bounds each gate and each invariant.
const DefaultGateTimeout = 10 * time.Second

// Policy decides which plugins need a human.
type Policy struct {
	// SensitiveScopes and SensitivePoints replace the defaults when not nil.
	SensitiveScopes []string
	SensitivePoints []string
	// AutoApprove mounts sensitive plugins without a human, and taints the
	// kernel (kernel.TaintAutoApproval) the first time it does.
	AutoApprove bool
	// MaxPending bounds the approvals waiting at once (each holds a plugin's
	// manifest and code in memory, in the log and in every state read).
	// Past it a sensitive submission is rejected until some are decided.
	// Default DefaultMaxPending. A plugin id holds at most one pending
	// approval whatever the limits: a newer submission supersedes it.
	MaxPending int
	// MaxPendingPerRequester bounds the approvals one requester (the
	// credential, or the name it submits for) has waiting at once, so one
	// caller cannot take every slot of MaxPending. Default
	// DefaultMaxPendingPerRequester.
	MaxPendingPerRequester int
	// MaxPendingBytes bounds what one pending approval holds: its manifest
	// (as JSON) and its code. A sensitive submission above it is rejected
	// at the policy gate. Default DefaultMaxPendingBytes.
	MaxPendingBytes int
	// RequiredApprovers is how many distinct people must approve a
	// pending plugin (default 1, at most MaxRequiredApprovers), and
	// ApproverGroups, when set, the groups each must come from. With
	// either, the requester's own approval never counts.
	RequiredApprovers int
	ApproverGroups    []string
}

// Defaults of the Policy's bounds on pending approvals. A pending approval
// may hold any code the lint gate accepts (MaxSourceBytes) with a 64 KiB
// manifest, and what it replaces: a manifest of at most 64 KiB and a code
// diff of at most MaxCodeDiffBytes; the approvals waiting then hold at
// most 64 x 448 KiB = 28 MiB, and one requester's at most 3.5 MiB. A
// plugin that mounts without a human
// is bounded by the manifest gate instead (a 1 MiB manifest): it is not
// kept in every state read.
const (
	DefaultMaxPending             = 64
	DefaultMaxPendingPerRequester = 8
	DefaultMaxPendingBytes        = MaxSourceBytes + 64<<10
)

// Options configure the judge.
type Options struct {
	// Executor runs the load gate's throwaway units. Without one every
	// submission is rejected at the load gate.
	Executor kernel.Executor
	// Policy decides what needs approval.
	Policy Policy
	// GateTimeout bounds each gate and each invariant. Default DefaultGateTimeout.
	GateTimeout time.Duration
	// Now is the clock for approvals. Default time.Now.
	Now func() time.Time
	// Logger receives the judge's logs. Default: discarded.
	Logger *slog.Logger
	// Grant says which capabilities requestedBy may give the plugin it
	// submits, from ctx (the credential or session submitting it). The
	// capability gate refuses a plugin whose declaration needs more.
	// Default: every capability (kernel.AllCapabilities); the system
	// capabilities (contracts.SystemCapabilities) are refused whatever it
	// grants.
	Grant func(ctx context.Context, requestedBy string) []string
}

// Judge is the judge: a system plugin whose Service gates every agent
// plugin before it mounts. Create it with New and install Plugin().
type Judge struct {
	opts   Options
	active atomic.Pointer[epoch] // nil while the judge's fiber is not active
}

// epoch is the judge's state for one activation of its fiber. It is
// rebuilt from the event log on every activation, so swapping it never
// waits for a submission in flight (which may be waiting for the kernel).
type epoch struct {
	api *kernel.API

	mu      sync.Mutex          // serializes submissions and decisions; guards the maps
	pending map[string]Approval // by approval id
	mounted map[string]string   // plugin id -> submission key of what the judge mounted

	// listed is pending as Pending returns it, republished on every
	// change, so reads never wait for a submission in flight.
	listed atomic.Pointer[[]Approval]
}

// setPending adds (a != nil) or removes approval id and republishes the
// list; the caller holds s.mu.
func (s *epoch) setPending(id string, a *Approval) {
	if a != nil {
		s.pending[id] = *a
	} else {
		delete(s.pending, id)
	}
	s.publish()
}

// publish rebuilds the list Pending returns; the caller holds s.mu.
func (s *epoch) publish() {
	out := make([]Approval, 0, len(s.pending))
	for _, a := range s.pending {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Approval) int {
		if c := a.Requested.Compare(b.Requested); c != 0 {
			return c
		}
		return cmpString(a.ID, b.ID)
	})
	s.listed.Store(&out)
}

var _ Service = (*Judge)(nil)

// New returns a judge. It does nothing until its plugin is activated.
func New(opts Options) *Judge {
	if opts.Policy.SensitiveScopes == nil {
		opts.Policy.SensitiveScopes = DefaultSensitiveScopes
	}
	if opts.Policy.SensitivePoints == nil {
		opts.Policy.SensitivePoints = DefaultSensitivePoints
	}
	opts.Policy.MaxPending = orDefault(opts.Policy.MaxPending, DefaultMaxPending)
	opts.Policy.MaxPendingPerRequester = orDefault(opts.Policy.MaxPendingPerRequester, DefaultMaxPendingPerRequester)
	opts.Policy.MaxPendingBytes = orDefault(opts.Policy.MaxPendingBytes, DefaultMaxPendingBytes)
	if opts.GateTimeout <= 0 {
		opts.GateTimeout = DefaultGateTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Grant == nil {
		opts.Grant = func(context.Context, string) []string { return []string{kernel.AllCapabilities} }
	}
	return &Judge{opts: opts}
}

// Plugin returns the judge's system plugin: it defines Key, GatePoint and
// InvariantPoint (all system-only), contributes the built-in gates and
// provides the Service. It is the kernel's RestoreGuard too (VetRestore).
func (j *Judge) Plugin() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: ID, Version: "1", Description: "Gates, approves and mounts agent plugins",
			Provide: []string{Key}},
		Activate:     j.activate,
		RestoreGuard: j,
	}
}

func (j *Judge) activate(ctx context.Context, c *kernel.Context) error {
	api := c.Kernel()
	if api == nil {
		return errors.New("the judge needs the system-only kernel API: install it as a system plugin")
	}
	system := kernel.KeyMeta{Description: "the judge's Service", MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem,
		Requires: []string{contracts.CapPluginInstall}, Reaches: []string{contracts.CapPluginInstall}}
	if err := errors.Join(
		api.DefineKey(Key, system),
		api.DefinePoint(GatePoint, kernel.PointMeta{Description: "judge.Gate", MinContributorTrust: kernel.TrustSystem, Validate: validateGate}),
		api.DefinePoint(InvariantPoint, kernel.PointMeta{Description: "judge.Invariant", MinContributorTrust: kernel.TrustSystem, Validate: validateInvariant}),
	); err != nil {
		return err
	}
	pending, mounted, err := fold(ctx, api.Kernel)
	if err != nil {
		return err
	}
	for _, g := range j.builtinGates() {
		if _, err := c.Contribute(GatePoint, g); err != nil {
			return err
		}
	}
	if err := c.Provide(Key, Service(j)); err != nil {
		return err
	}
	s := &epoch{api: api, pending: pending, mounted: mounted}
	s.publish()
	j.active.Store(s)
	return c.OnUndo("judge epoch", func() error {
		j.active.CompareAndSwap(s, nil)
		return nil
	})
}

func validateGate(item any) error {
	g, ok := item.(Gate)
	if !ok || g.Name == "" || g.Check == nil {
		return fmt.Errorf("a gate must be a judge.Gate with a name and a Check, not %T", item)
	}
	return nil
}

func validateInvariant(item any) error {
	inv, ok := item.(Invariant)
	if !ok || inv.Name == "" || inv.Check == nil {
		return fmt.Errorf("an invariant must be a judge.Invariant with a name and a Check, not %T", item)
	}
	return nil
}

// begin returns the active epoch, locked; the caller unlocks it.
func (j *Judge) begin(ctx context.Context) (*epoch, error) {
	s := j.active.Load()
	if s != nil && s.api.InOperation(ctx) {
		// A submission or decision started from an activation, an observer
		// or an undo would wait for the operation that runs it (a mount by
		// this judge holds s.mu and the kernel's lock).
		return nil, &kernel.Error{Code: kernel.CodeLifecycle, Op: "judge", Fiber: ID,
			Message: "a plugin cannot be submitted, approved or rejected from inside a plugin's activation, observer or undo: do it after the activation returns"}
	}
	if s != nil && s.api.SafeMode() {
		// Nothing is recorded: the same submission or decision passes
		// once the kernel runs normally again.
		return nil, &kernel.Error{Code: kernel.CodeUnavailable, Op: "judge", Fiber: ID, Message: kernel.ErrSafeMode.Error()}
	}
	if s != nil {
		s.mu.Lock()
		if j.active.Load() == s {
			return s, nil
		}
		s.mu.Unlock()
	}
	return nil, &kernel.Error{Code: kernel.CodeLifecycle, Op: "judge", Fiber: ID, Message: "the judge is not active"}
}

// Pending implements Service. It never waits for a submission or decision
// in flight: it answers the list as of the last change.
func (j *Judge) Pending() []Approval {
	s := j.active.Load()
	if s == nil {
		return []Approval{}
	}
	if list := s.listed.Load(); list != nil {
		return slices.Clone(*list)
	}
	return []Approval{}
}

// orDefault returns n, or def when n is not positive.
func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// gates returns the gates to run: the judge's own first, in their order,
// then the others in the order they were contributed.
func gates(k *kernel.Kernel) []Gate {
	var own, others []Gate
	for _, c := range k.Contributions(GatePoint) {
		g, ok := c.Item.(Gate)
		if !ok {
			continue
		}
		if c.Fiber == ID {
			own = append(own, g)
		} else {
			others = append(others, g)
		}
	}
	return append(own, others...)
}

// runChecked runs fn under the gate timeout; an error, a panic or a timeout
// is a refusal. A check that ignores its context is abandoned, not waited for.
func (j *Judge) runChecked(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, j.opts.GateTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("%s panicked: %v", name, r)
			}
		}()
		done <- fn(ctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s did not finish within %s: %w", name, j.opts.GateTimeout, ctx.Err())
	}
}
