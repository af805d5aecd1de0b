package baseline

import (
	"context"
	"fmt"
	"slices"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// grant returns the judge's Grant: what the caller submitting a plugin may
// give it. A caller with the admin scope, or any caller of an open admin
// API (no credentials: whoever reaches it is an admin), may give every
// capability; any other may give agentCaps (every capability when nil).
// The judge refuses the system capabilities whatever the grant.
func grant(agentCaps []string) func(ctx context.Context, requestedBy string) []string {
	return func(ctx context.Context, _ string) []string {
		who := smshttp.PrincipalFrom(ctx)
		if agentCaps == nil || !who.Authenticated || who.Has(smshttp.ScopeAdmin) {
			return []string{kernel.AllCapabilities}
		}
		return slices.Clone(agentCaps)
	}
}

// CheckCapabilities reports the first name in names that is not one of
// the product's capabilities (contracts.Capabilities) or is a system one,
// which no requester may grant.
func CheckCapabilities(names []string) error {
	for _, n := range names {
		i := slices.IndexFunc(contracts.Capabilities, func(c contracts.Capability) bool { return c.Name == n })
		switch {
		case i < 0:
			return fmt.Errorf("unknown capability %q (known: %s)", n, capabilityNames())
		case contracts.Capabilities[i].System:
			return fmt.Errorf("capability %q is for system plugins only: no requester may grant it", n)
		}
	}
	return nil
}

func capabilityNames() string {
	out := ""
	for i, c := range contracts.Capabilities {
		if c.System {
			continue
		}
		if i > 0 {
			out += ", "
		}
		out += c.Name
	}
	return out
}
