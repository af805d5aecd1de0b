package baseline_test

import (
	"context"
	"slices"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/scripted"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/plugins/agentloop"
	"github.com/sms-baseline/sms/plugins/auth"
)

// No path leads from agent code to plugin.install or the judge: a search
// over the capability graph of a kernel with every system plugin on
// (users, every optional service, the chat agent) starts from every
// capability an agent plugin could be granted, follows each key agent
// code may read and what its service exercises for it, and never reaches
// plugin.install, the judge's key or points, or the chat agent's key (its
// service installs plugins). Seen failing with the agent loop's key
// defined with MinConsumerTrust agent (plugin.install reached), and with
// the judge's key defined with agent consumer trust and no requirement.
func TestNoPathFromAgentCodeToPluginInstall(t *testing.T) {
	ctx := context.Background()
	b, err := baseline.New(ctx, baseline.Options{Auth: &auth.Options{}, Services: baseline.Services,
		Model: scripted.New([][]contracts.Block{{{Type: contracts.BlockText, Text: "hi"}}})})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	catalog := b.Kernel.Catalog()
	start := slices.DeleteFunc(catalog.Named(), func(c string) bool { return slices.Contains(contracts.SystemCapabilities(), c) })
	for _, c := range contracts.Capabilities {
		if !c.System {
			start = append(start, c.Name)
		}
	}
	reach := catalog.AgentReach(start)
	if slices.Contains(reach.Capabilities, contracts.CapPluginInstall) {
		t.Fatalf("agent code reaches plugin.install: keys %v", reach.Keys)
	}
	for _, key := range []string{judge.Key, agentloop.Key} {
		if slices.Contains(reach.Keys, key) {
			t.Fatalf("agent code reaches key %s", key)
		}
	}
	for _, point := range []string{judge.GatePoint, judge.InvariantPoint} {
		if slices.Contains(reach.Points, point) {
			t.Fatalf("agent code reaches point %s", point)
		}
	}
	if len(reach.Keys) == 0 || len(reach.Points) == 0 {
		t.Fatalf("the search reached nothing (keys %v, points %v): it proves nothing", reach.Keys, reach.Points)
	}
}
