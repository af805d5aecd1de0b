package kernel

import (
	"encoding/json"
	"strings"
)

// Taint is one sticky flag. Once set on a kernel it stays set for the
// kernel's lifetime, so every later error report says whether something
// unusual has happened since boot.
type Taint uint32

// The taint flags.
const (
	// TaintForcedUninstall: a system fiber was uninstalled with force.
	TaintForcedUninstall Taint = 1 << iota
	// TaintTrustEscalation: a fiber tried to use a key or point above its
	// trust tier, or an agent plugin tried to take a system id.
	TaintTrustEscalation
	// TaintRollback: a mounted change was rolled back (set by the judge).
	TaintRollback
	// TaintAutoApproval: a sensitive plugin was mounted without a human (set
	// by the judge when policy auto-approves).
	TaintAutoApproval
	// TaintUndoFailed: an effect's inverse returned an error or panicked.
	TaintUndoFailed
	// TaintSystemDisableIgnored: the event log said a system plugin was
	// disabled; Restore kept it enabled.
	TaintSystemDisableIgnored
	// TaintRestoreRefused: the event log installs an agent plugin that was
	// never committed, or that a RestoreGuard refused (one needing an
	// approval the log does not have); Restore left it out.
	TaintRestoreRefused
	// TaintQuarantine: an agent plugin was quarantined (its sandbox
	// stopped, or its activations kept failing), or a boot found one.
	TaintQuarantine
)

var taintNames = []struct {
	flag Taint
	name string
}{
	{TaintForcedUninstall, "forced_uninstall"},
	{TaintTrustEscalation, "trust_escalation"},
	{TaintRollback, "rollback"},
	{TaintAutoApproval, "auto_approval"},
	{TaintUndoFailed, "undo_failed"},
	{TaintSystemDisableIgnored, "system_disable_ignored"},
	{TaintRestoreRefused, "restore_refused"},
	{TaintQuarantine, "quarantine"},
}

// String returns the flag's name.
func (t Taint) String() string {
	for _, n := range taintNames {
		if n.flag == t {
			return n.name
		}
	}
	return "unknown"
}

// TaintSet is a set of taint flags.
type TaintSet uint32

// Has reports whether flag is in the set.
func (s TaintSet) Has(flag Taint) bool { return uint32(s)&uint32(flag) != 0 }

// Empty reports whether no flag is set.
func (s TaintSet) Empty() bool { return s == 0 }

// Names returns the names of the flags in the set, in a fixed order.
func (s TaintSet) Names() []string {
	names := []string{}
	for _, n := range taintNames {
		if s.Has(n.flag) {
			names = append(names, n.name)
		}
	}
	return names
}

// String returns the names joined by commas.
func (s TaintSet) String() string { return strings.Join(s.Names(), ",") }

// MarshalJSON encodes the set as a list of names.
func (s TaintSet) MarshalJSON() ([]byte, error) { return json.Marshal(s.Names()) }
