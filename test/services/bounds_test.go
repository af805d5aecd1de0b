package services

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/automation"
	"github.com/sms-baseline/sms/plugins/meta"
)

// TestPerModelBounds: views and automations per model are bounded, and a
// plugin past a bound is refused naming it, with nothing of it kept. Seen
// failing with the per-model counts removed (both plugins mounted).
func TestPerModelBounds(t *testing.T) {
	e := boot(t, options{})
	views := make([]any, meta.MaxViewsPerModel+1)
	for i := range views {
		views[i] = meta.View{Name: fmt.Sprintf("v%d", i), Model: "invoice", Type: "list"}
	}
	rules := make([]any, automation.MaxPerModel+1)
	for i := range rules {
		rules[i] = automation.Automation{Name: fmt.Sprintf("r%d", i), Model: "invoice", Trigger: automation.OnCreate,
			Action: automation.Action{Kind: automation.ActNote, Body: "new"}}
	}
	for _, c := range []struct {
		id, point string
		items     []any
		want      string
	}{
		{"app.views", meta.ViewPoint, views, "model invoice has 64 views; the limit is 64 views per model"},
		{"app.rules", automation.Point, rules, "model invoice has 32 automations; the limit is 32 automations per model"},
	} {
		p := kernel.Plugin{Manifest: kernel.Manifest{ID: c.id, Version: "1", Contributes: map[string][]any{c.point: c.items}}}
		if err := e.Kernel.Install(p); err != nil {
			t.Fatal(err)
		}
		if err := e.Kernel.Enable(t.Context(), c.id); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: %v, want an error saying %q", c.id, err, c.want)
		}
	}
	if r := e.Do("POST", "/api/rpc/meta", call(1, "views", "invoice"), bearer(token)); !strings.Contains(string(r.Body), `"result":[]`) {
		t.Fatalf("views after the refusal: %s", r.Body)
	}
}
