package kernel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
)

// Manifest declares what a plugin is and what it touches. The kernel
// reconciles on it: a fiber activates only when every key in Inject is
// provided, may read only keys in Inject or Optional, may provide only keys
// in Provide, and (at agent trust) may contribute only to the points it
// declares (DeclaredPoints).
type Manifest struct {
	ID          string   `json:"id"`
	Version     string   `json:"version"`
	Description string   `json:"description,omitempty"`
	Inject      []string `json:"inject,omitempty"`   // hard dependencies
	Optional    []string `json:"optional,omitempty"` // soft dependencies, visible in the fiber view
	Provide     []string `json:"provide,omitempty"`  // keys this plugin may provide
	Scopes      []string `json:"scopes,omitempty"`   // capabilities the judge's policy weighs, e.g. "net"
	// Points lists the points the plugin's code may contribute to. A point
	// with declarative items in Contributes is declared by being there.
	Points []string `json:"points,omitempty"`
	// Contributes holds declarative items per point, applied before activate.
	Contributes map[string][]any `json:"contributes,omitempty"`
}

const maxNameLen = 100

// Validate reports the first thing wrong with the manifest, naming the field.
func (m *Manifest) Validate() error {
	if m.ID == "" {
		return kerr(CodeValidation, "manifest", "", "id is required")
	}
	if !validID(m.ID) {
		return kerr(CodeValidation, "manifest", m.ID,
			fmt.Sprintf("id %q must be lowercase dot-separated words (a-z, 0-9, _ and -), at most %d characters", m.ID, maxNameLen))
	}
	if m.Version == "" {
		return kerr(CodeValidation, "manifest", m.ID, "version is required")
	}
	lists := []struct {
		field string
		names []string
	}{{"inject", m.Inject}, {"optional", m.Optional}, {"provide", m.Provide}, {"scopes", m.Scopes}, {"points", m.Points}}
	for _, l := range lists {
		if err := validateNames(m.ID, l.field, l.names); err != nil {
			return err
		}
	}
	for _, k := range m.Optional {
		if slices.Contains(m.Inject, k) {
			return kerr(CodeValidation, "manifest", m.ID, fmt.Sprintf("key %q is in both inject and optional", k))
		}
	}
	for point := range m.Contributes {
		if !validName(point) {
			return kerr(CodeValidation, "manifest", m.ID, fmt.Sprintf("contributes: invalid point name %q", point))
		}
	}
	return nil
}

func validateNames(id, field string, names []string) error {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !validName(n) {
			return kerr(CodeValidation, "manifest", id, fmt.Sprintf("%s: invalid name %q", field, n))
		}
		if seen[n] {
			return kerr(CodeValidation, "manifest", id, fmt.Sprintf("%s: %q listed twice", field, n))
		}
		seen[n] = true
	}
	return nil
}

// validName reports whether n is a key, point or scope name: a lowercase
// letter, then lowercase letters, digits, '_', '-' and '.'.
func validName(n string) bool {
	if n == "" || len(n) > maxNameLen || n[0] < 'a' || n[0] > 'z' {
		return false
	}
	for i := 1; i < len(n); i++ {
		if !wordByte(n[i]) && n[i] != '.' {
			return false
		}
	}
	return true
}

// validID reports whether id is a plugin id: dot-separated non-empty words
// of lowercase letters, digits, '_' and '-', starting with a letter.
func validID(id string) bool {
	if !validName(id) || id[len(id)-1] == '.' {
		return false
	}
	for i := 1; i < len(id); i++ {
		if id[i] == '.' && id[i-1] == '.' {
			return false
		}
	}
	return true
}

func wordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// DeclaredPoints returns, sorted and without repeats, every point the
// manifest declares: those in Points and those Contributes has items for.
// It is the set the judge's policy reads and the kernel enforces.
func (m *Manifest) DeclaredPoints() []string {
	out := slices.Clone(m.Points)
	for p := range m.Contributes {
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// declaresPoint reports whether the manifest declares point.
func (m *Manifest) declaresPoint(point string) bool {
	if slices.Contains(m.Points, point) {
		return true
	}
	_, ok := m.Contributes[point]
	return ok
}

// Declaration is the digest of everything a manifest declares it may do:
// its id, version, keys, scopes and points. A mount authorization and the
// log's mount record bind it together with the code hash, so a manifest that
// asks for more than was judged is refused, live and on restore.
func (m *Manifest) Declaration() string {
	sorted := func(list []string) []string {
		out := slices.Clone(list)
		slices.Sort(out)
		return out
	}
	h := sha256.New()
	for _, part := range [][]string{{m.ID}, {m.Version}, sorted(m.Inject), sorted(m.Optional), sorted(m.Provide),
		sorted(m.Scopes), m.DeclaredPoints()} {
		for _, s := range part {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
		h.Write([]byte{1})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// declaresRead reports whether the manifest lets the plugin read key.
func (m *Manifest) declaresRead(key string) bool {
	return slices.Contains(m.Inject, key) || slices.Contains(m.Optional, key)
}

// clone returns a deep enough copy that later changes by the caller cannot
// reach the kernel's copy (slices are copied; contributed items are not).
func (m Manifest) clone() Manifest {
	m.Inject = slices.Clone(m.Inject)
	m.Optional = slices.Clone(m.Optional)
	m.Provide = slices.Clone(m.Provide)
	m.Scopes = slices.Clone(m.Scopes)
	m.Points = slices.Clone(m.Points)
	if m.Contributes != nil {
		c := make(map[string][]any, len(m.Contributes))
		for k, v := range m.Contributes {
			c[k] = slices.Clone(v)
		}
		m.Contributes = c
	}
	return m
}

// ActivateFunc is a system plugin's activation. It runs once per activation
// with a Context bound to the fiber; everything it provides or contributes is
// undone by the kernel when the fiber deactivates.
type ActivateFunc func(ctx context.Context, c *Context) error

// Plugin is a system plugin: a manifest plus in-process activation code.
type Plugin struct {
	Manifest Manifest
	// Activate may be nil for a purely declarative plugin.
	Activate ActivateFunc
	// RestoreGuard, when set, vets the agent plugins Restore mounts again
	// (see RestoreGuard). Only a system plugin's counts.
	RestoreGuard RestoreGuard
}

// HashCode returns the content address of agent code: "sha256:" + hex digest.
func HashCode(code []byte) string {
	sum := sha256.Sum256(code)
	return "sha256:" + hex.EncodeToString(sum[:])
}
