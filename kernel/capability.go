package kernel

import (
	"fmt"
	"slices"
	"strings"
)

// Capabilities are named rights (db.read, http.route, plugin.install...;
// contracts names the product's). A key's metadata says which a consumer
// needs (KeyMeta.Requires, and KeyMeta.Methods for one method of it) and
// which its service exercises for the caller (KeyMeta.Reaches); a point's
// says which a contributor needs (PointMeta.Requires).
//
// An agent plugin's set is derived from its declaration when it is
// proposed (DeriveCapabilities): the scopes it declares, and what its
// injected and optional keys and its points require. The judge refuses,
// before any code runs, a plugin whose set is not within its requester's
// grant, and the kernel checks the set on every get, invoke, provide and
// contribute, where it checks trust. The set is recorded in the log with
// the install, so a key that later requires more is refused to a plugin
// mounted before, until it is proposed again. System fibers hold every
// capability (AllCapabilities).

// AllCapabilities is the set that holds every capability: system fibers'
// set, and a grant with no limit.
const AllCapabilities = "*"

// DeriveCapabilities returns the capability set manifest m declares under
// the kernel's current metadata, sorted: its scopes, and the capabilities
// its injected and optional keys (Requires) and the points it declares
// (Requires) and the keys it provides (ProviderRequires) need, and the
// capabilities of the agent plugins providing its keys now. Keys and
// points not defined yet add nothing.
func (k *Kernel) DeriveCapabilities(m Manifest) []string {
	k.reg.RLock()
	defer k.reg.RUnlock()
	set := slices.Clone(m.Scopes)
	for _, key := range append(slices.Clone(m.Inject), m.Optional...) {
		if e := k.keys[key]; e != nil {
			set = append(set, e.requires()...)
		}
	}
	for _, key := range m.Provide {
		if e := k.keys[key]; e != nil && e.defined {
			set = append(set, e.meta.ProviderRequires...)
		}
	}
	for _, point := range m.DeclaredPoints() {
		if p := k.points[point]; p != nil {
			set = append(set, p.meta.Requires...)
		}
	}
	return normalizeCapabilities(set)
}

// normalizeCapabilities sorts set and drops repeats; it returns a non-nil
// slice, so an empty set is told from one never derived.
func normalizeCapabilities(set []string) []string {
	out := slices.Clone(set)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// MissingCapabilities returns the members of need that set lacks, in the
// order of need. A set holding AllCapabilities lacks none.
func MissingCapabilities(set, need []string) []string {
	if slices.Contains(set, AllCapabilities) {
		return nil
	}
	var out []string
	for _, c := range need {
		if !slices.Contains(set, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// capabilitiesOfLocked returns f's set: every capability for a system
// fiber; for an agent fiber, the set recorded when it was proposed, or
// (for an install logged before sets were recorded) the one derived from
// its declaration when it activated (see activate). The caller holds
// k.reg for reading.
func (k *Kernel) capabilitiesOfLocked(f *fiber) []string {
	if f.trust == TrustSystem {
		return []string{AllCapabilities}
	}
	return f.caps
}

// checkCapabilities fails with CodeCapability when f's set lacks any of
// need, naming the missing ones and what needed them.
func (k *Kernel) checkCapabilities(f *fiber, need []string, op, what string) error {
	if len(need) == 0 || f.trust == TrustSystem {
		return nil
	}
	k.reg.RLock()
	missing := MissingCapabilities(k.capabilitiesOfLocked(f), need)
	k.reg.RUnlock()
	if len(missing) == 0 {
		return nil
	}
	return k.errf(CodeCapability, op, f.id, fmt.Sprintf("%s needs the capabilities %s, which %s does not hold: declare them (scopes) and submit it again",
		what, strings.Join(missing, ", "), f.id))
}

// checkMethod checks the capabilities invoking method of key needs (its
// KeyMeta.Methods entry) against f's set.
func (k *Kernel) checkMethod(f *fiber, key, method string) error {
	k.reg.RLock()
	var need []string
	if e := k.keys[key]; e != nil {
		need = e.meta.Methods[method]
	}
	k.reg.RUnlock()
	return k.checkCapabilities(f, need, "invoke", fmt.Sprintf("invoking %s.%s", key, method))
}

// sameKeyRequirements reports whether two definitions of a key ask the
// same capabilities: like trust, requirements never change by defining a
// key again.
func sameKeyRequirements(a, b KeyMeta) bool {
	if !sameSet(a.Requires, b.Requires) || !sameSet(a.ProviderRequires, b.ProviderRequires) || len(a.Methods) != len(b.Methods) {
		return false
	}
	for m, need := range a.Methods {
		if other, ok := b.Methods[m]; !ok || !sameSet(need, other) {
			return false
		}
	}
	return true
}

// sameSet reports whether a and b hold the same names.
func sameSet(a, b []string) bool {
	return slices.Equal(normalizeCapabilities(a), normalizeCapabilities(b))
}
