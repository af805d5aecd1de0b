package agentloop

import (
	"context"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/agentloop"
)

// The system prompt is the identity line, then every prompt contribution
// by order, whatever the order they arrived in. Seen failing with the sort
// in the system prompt removed (within 30 runs: unsorted, the order is a
// map's).
func TestSystemPromptSectionsByOrder(t *testing.T) {
	m := record(text("ok"))
	app := kernel.Plugin{Manifest: kernel.Manifest{ID: "app.prompts", Version: "1", Contributes: map[string][]any{
		agentloop.PromptPoint: {
			agentloop.Prompt{Section: "late", Order: 20, Text: "Invoices live in the invoice collection."},
			map[string]any{"section": "early", "order": 10, "text": "Answer briefly."},
		},
	}}}
	env := baselinetest.New(t, baselinetest.Options{Approvals: true, Model: m, Plugins: []kernel.Plugin{app}})
	v, err := env.Kernel.GetValue(agentloop.Key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.(agentloop.Service).Chat(context.Background(), "s", "hi"); err != nil {
		t.Fatal(err)
	}
	system := m.requests()[0].System
	early, late := strings.Index(system, "## early\nAnswer briefly."), strings.Index(system, "## late\nInvoices")
	if early <= 0 || late <= early {
		t.Fatalf("system prompt = %q, want the identity line, then early, then late", system)
	}
}
