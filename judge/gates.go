package judge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// builtinGates returns the judge's own gates, in the order they run.
func (j *Judge) builtinGates() []Gate {
	return []Gate{
		{Name: GateManifest, Check: checkManifest},
		{Name: GateTrust, Check: checkTrust},
		{Name: GateCapability, Check: checkCapabilities},
		{Name: GateLint, Check: func(_ context.Context, s *Submission) error { return lint(s.Code) }},
		{Name: GateLoad, Check: j.checkLoad},
	}
}

// checkManifest: the manifest is well formed, names an agent plugin, fits
// the snapshot limits, and contributes only to points that exist.
func checkManifest(_ context.Context, s *Submission) error {
	m := s.Manifest
	if err := m.Validate(); err != nil {
		return err
	}
	if !strings.HasPrefix(m.ID, AgentPrefix) || len(m.ID) == len(AgentPrefix) {
		return fmt.Errorf("id %q must start with %q: only agent plugins are submitted", m.ID, AgentPrefix)
	}
	if strings.TrimSpace(s.Code) == "" {
		return errors.New("the plugin has no code")
	}
	if _, err := kernel.Snapshot(m); err != nil {
		return fmt.Errorf("the manifest cannot be stored: %w", err)
	}
	for _, point := range m.DeclaredPoints() {
		if findPoint(s.Catalog, point) == nil {
			return fmt.Errorf("points: point %q is not defined", point)
		}
	}
	return nil
}

// checkTrust: the plugin asks for nothing above agent trust (using the
// catalog's key and point metadata), does not take a system plugin's id,
// and provides no key another plugin provides.
func checkTrust(_ context.Context, s *Submission) error {
	m := s.Manifest
	if v, ok := s.kernel.Fiber(m.ID); ok && v.Trust != kernel.TrustAgent {
		return fmt.Errorf("id %q belongs to a system plugin", m.ID)
	}
	for _, key := range slices.Concat(m.Inject, m.Optional) {
		if k := findKey(s.Catalog, key); k != nil && k.Meta.MinConsumerTrust > kernel.TrustAgent {
			return fmt.Errorf("key %q is system-only and cannot be read by an agent plugin", key)
		}
	}
	for _, key := range m.Provide {
		k := findKey(s.Catalog, key)
		if k == nil {
			continue
		}
		if k.Meta.MinProviderTrust > kernel.TrustAgent {
			return fmt.Errorf("key %q can only be provided by a system plugin", key)
		}
		if k.Provider != "" && k.Provider != m.ID {
			return fmt.Errorf("key %q is already provided by %s", key, k.Provider)
		}
	}
	for _, point := range m.DeclaredPoints() {
		if p := findPoint(s.Catalog, point); p != nil && p.Meta.MinContributorTrust > kernel.TrustAgent {
			return fmt.Errorf("point %q is system-only", point)
		}
	}
	return nil
}

// checkCapabilities: the plugin's capability set, derived from its
// declaration, holds no system capability and lies within what its
// requester may grant. It runs before any of the plugin's code does.
func checkCapabilities(_ context.Context, s *Submission) error {
	s.Capabilities = s.kernel.DeriveCapabilities(s.Manifest)
	for _, c := range contracts.SystemCapabilities() {
		if slices.Contains(s.Capabilities, c) {
			return fmt.Errorf("capability %s is for system plugins only: no agent plugin may declare or need it", c)
		}
	}
	if missing := kernel.MissingCapabilities(s.Grant, s.Capabilities); len(missing) > 0 {
		return fmt.Errorf("the plugin needs %s, which %s may not give a plugin (they may give: %s)",
			strings.Join(missing, ", "), requesterName(s.RequestedBy), grantText(s.Grant))
	}
	return nil
}

func requesterName(by string) string {
	if by == "" {
		return "its requester"
	}
	return by
}

func grantText(grant []string) string {
	if len(grant) == 0 {
		return "nothing"
	}
	return strings.Join(grant, ", ")
}

func findKey(c kernel.Catalog, name string) *kernel.KeyView {
	for i := range c.Keys {
		if c.Keys[i].Name == name {
			return &c.Keys[i]
		}
	}
	return nil
}

func findPoint(c kernel.Catalog, name string) *kernel.PointView {
	for i := range c.Points {
		if c.Points[i].Name == name {
			return &c.Points[i]
		}
	}
	return nil
}

// sensitive returns why the submission needs a human: its sensitive
// scopes, and the sensitive points it declares. Only the declaration
// counts; the kernel refuses any contribution beyond it, live and on
// restore, whatever the code did on trial.
func (j *Judge) sensitive(s *Submission) []string { return j.sensitiveManifest(s.Manifest) }

// sensitiveManifest returns why a plugin declaring m needs a human.
func (j *Judge) sensitiveManifest(m kernel.Manifest) []string {
	var reasons []string
	for _, scope := range m.Scopes {
		if slices.Contains(j.opts.Policy.SensitiveScopes, scope) {
			reasons = append(reasons, "scope "+scope)
		}
	}
	for _, point := range m.DeclaredPoints() {
		if slices.Contains(j.opts.Policy.SensitivePoints, point) {
			reasons = append(reasons, "point "+point)
		}
	}
	return reasons
}
