package kernel

import "slices"

// Reach is what agent code can reach through a catalog: the keys it may
// read or invoke, the points it may contribute to, and the capabilities
// it holds or exercises through those keys' services.
type Reach struct {
	Capabilities []string `json:"capabilities"`
	Keys         []string `json:"keys"`
	Points       []string `json:"points"`
}

// Named returns every capability the catalog's metadata names (keys'
// Requires, Methods, ProviderRequires and Reaches; points' Requires),
// sorted.
func (c Catalog) Named() []string {
	var out []string
	for _, k := range c.Keys {
		out = append(out, k.Meta.Requires...)
		out = append(out, k.Meta.ProviderRequires...)
		out = append(out, k.Meta.Reaches...)
		for _, need := range k.Meta.Methods {
			out = append(out, need...)
		}
	}
	for _, p := range c.Points {
		out = append(out, p.Meta.Requires...)
	}
	return normalizeCapabilities(out)
}

// AgentReach searches the capability graph for what an agent plugin
// holding the capabilities in start can reach: a key whose consumer trust
// is agent and whose Requires it holds is reachable, and the capabilities
// that key's service exercises for its caller (Reaches) are added to what
// it holds, which may open more keys; a point whose contributor trust is
// agent and whose Requires it holds is reachable. It runs to a fixed
// point, so a chain of keys is followed however long. Key methods whose
// Methods entry it holds add nothing beyond their key's Reaches.
func (c Catalog) AgentReach(start []string) Reach {
	held := map[string]bool{}
	for _, s := range start {
		held[s] = true
	}
	holds := func(need []string) bool {
		for _, n := range need {
			if !held[n] {
				return false
			}
		}
		return true
	}
	keys := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, k := range c.Keys {
			if keys[k.Name] || k.Meta.MinConsumerTrust != TrustAgent || !holds(k.Meta.Requires) {
				continue
			}
			keys[k.Name], changed = true, true
			for _, r := range k.Meta.Reaches {
				held[r] = true
			}
		}
	}
	r := Reach{Capabilities: []string{}, Keys: []string{}, Points: []string{}}
	for name := range held {
		r.Capabilities = append(r.Capabilities, name)
	}
	for name := range keys {
		r.Keys = append(r.Keys, name)
	}
	for _, p := range c.Points {
		if p.Meta.MinContributorTrust == TrustAgent && holds(p.Meta.Requires) {
			r.Points = append(r.Points, p.Name)
		}
	}
	slices.Sort(r.Capabilities)
	slices.Sort(r.Keys)
	return r
}
