package baseline_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/plugins/agentloop"
)

// looping is a model that asks for a tool on every call and records the
// system prompts it was sent.
type looping struct {
	mu      sync.Mutex
	systems []string
}

func (m *looping) Complete(_ context.Context, req contracts.ModelRequest) (contracts.ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.systems = append(m.systems, req.System)
	return contracts.ModelResponse{StopReason: contracts.StopToolUse,
		Content: []contracts.Block{{Type: contracts.BlockToolUse, ID: "t", Name: "plugin_list", Input: json.RawMessage(`{}`)}}}, nil
}

// Options.Agent reaches the chat agent: its identity opens the system
// prompt, and a turn makes at most MaxSteps model calls. Seen failing with
// Options.Agent left out of systemPlugins (the default identity, 8 calls).
func TestAgentOptions(t *testing.T) {
	m := &looping{}
	e := baselinetest.New(t, baselinetest.Options{Model: m,
		Agent: agentloop.Options{Identity: "You keep the books of Acme.", MaxSteps: 3}})
	e.Call("/api/chat", map[string]string{"session": "s", "text": "loop"})
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.systems) != 3 {
		t.Errorf("the turn made %d model calls, want MaxSteps 3", len(m.systems))
	}
	if len(m.systems) == 0 || !strings.HasPrefix(m.systems[0], "You keep the books of Acme.") {
		t.Errorf("system prompt = %.80q, want the identity first", m.systems)
	}
}
