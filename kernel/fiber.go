package kernel

import (
	"slices"
	"sync/atomic"
)

// State is a fiber's lifecycle state.
type State string

// Fiber states. A fiber moves inactive -> loading -> active -> unloading ->
// inactive, or loading -> failed when activation fails.
const (
	StateInactive  State = "inactive"
	StateLoading   State = "loading"
	StateActive    State = "active"
	StateUnloading State = "unloading"
	StateFailed    State = "failed"
)

// fiber is one installed plugin. Its fields are guarded by Kernel.reg; they
// change only inside operations that hold Kernel.mu.
type fiber struct {
	id       string
	manifest Manifest
	trust    Trust
	enabled  bool
	state    State
	err      error

	activate ActivateFunc // system plugins
	guard    RestoreGuard // system plugins: vets what Restore mounts
	code     []byte       // agent plugins
	codeHash string
	staged   bool // installed by Propose and not yet committed (Commit) or aborted
	// requestedBy is who asked for an agent plugin's installed version.
	requestedBy string
	// reversible: the fiber was disabled with DisableReversibly, so
	// EnableReversible may enable it again; every other disable holds.
	reversible bool
	// failures counts its activations that failed in a row (from the log
	// at restore, then live) and stops the calls that stopped its unit in a
	// row; quarantine is why it was quarantined, and restarting is set
	// while a restart after a stop waits for the kernel's lock.
	failures   int
	stops      atomic.Int32 // stops blamed on it, in a row
	restarts   atomic.Int32 // restarts in a row, whoever caused them: their backoff
	quarantine string
	restarting bool
	// caps is an agent fiber's capability set (see DeriveCapabilities);
	// nil for an install logged before sets were recorded, derived then at
	// its activation.
	caps []string

	effects  []effect
	provides []string    // keys currently provided, in order
	gen      uint64      // activation generation; bumped when loading and when disposed
	act      *activation // an agent fiber's current activation: its unit and the calls running there
}

// Dependency is one declared key and whether it is provided right now.
type Dependency struct {
	Key     string `json:"key"`
	Present bool   `json:"present"`
}

// FiberView is a read-only snapshot of a fiber, for state views and APIs.
type FiberView struct {
	ID          string       `json:"id"`
	Version     string       `json:"version"`
	Description string       `json:"description,omitempty"`
	Trust       Trust        `json:"trust"`
	Enabled     bool         `json:"enabled"`
	State       State        `json:"state"`
	Error       string       `json:"error,omitempty"`
	CodeHash    string       `json:"codeHash,omitempty"`
	Staged      bool         `json:"staged,omitempty"` // mounted, not yet committed to the log
	Points      []string     `json:"points,omitempty"` // the points it declares
	Inject      []Dependency `json:"inject"`
	Optional    []Dependency `json:"optional"`
	Provides    []string     `json:"provides"`
	Scopes      []string     `json:"scopes,omitempty"`
	Effects     int          `json:"effects"`

	// Held is set on a disabled fiber whose disable only Enable undoes (an
	// admin's); one DisableReversibly disabled is not held.
	Held bool `json:"held,omitempty"`
	// RequestedBy is who asked for an agent plugin's installed version
	// (WithRequester on Propose): a credential's name, or user:<login>.
	// Its scheduled jobs and hooks act as that person.
	RequestedBy string `json:"requestedBy,omitempty"`
	// Quarantine says why the kernel quarantined the plugin (its sandbox
	// stopped, or its activations kept failing); it is set while the
	// quarantine's disable holds, until an admin enables the plugin.
	Quarantine string `json:"quarantine,omitempty"`
	// SafeMode is set on an agent plugin a kernel in safe mode keeps
	// inactive, whatever its enabled flag.
	SafeMode bool `json:"safeMode,omitempty"`
	// Capabilities is the fiber's capability set: ["*"] for a system
	// fiber (every capability).
	Capabilities []string `json:"capabilities,omitempty"`
}

// view builds the fiber's view; the caller holds k.reg for reading.
func (k *Kernel) view(f *fiber) FiberView {
	v := FiberView{
		ID: f.id, Version: f.manifest.Version, Description: f.manifest.Description,
		Trust: f.trust, Enabled: f.enabled, State: f.state, CodeHash: f.codeHash, Staged: f.staged,
		Held:   !f.enabled && !f.reversible,
		Points: f.manifest.DeclaredPoints(),
		Inject: k.deps(f.manifest.Inject), Optional: k.deps(f.manifest.Optional),
		Provides: append([]string{}, f.provides...), Scopes: append([]string(nil), f.manifest.Scopes...),
		Effects: len(f.effects), RequestedBy: f.requestedBy, Quarantine: f.quarantine,
		SafeMode:     k.safeMode && f.trust == TrustAgent,
		Capabilities: slices.Clone(k.capabilitiesOfLocked(f)),
	}
	if f.err != nil {
		v.Error = f.err.Error()
	}
	return v
}

func (k *Kernel) deps(keys []string) []Dependency {
	out := make([]Dependency, 0, len(keys))
	for _, key := range keys {
		e := k.keys[key]
		out = append(out, Dependency{Key: key, Present: e != nil && e.present})
	}
	return out
}

// satisfied reports whether every injected key is provided; the caller holds k.reg.
func (k *Kernel) satisfied(f *fiber) bool {
	for _, key := range f.manifest.Inject {
		if e := k.keys[key]; e == nil || !e.present {
			return false
		}
	}
	return true
}
