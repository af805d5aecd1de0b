package kernel_test

import (
	"context"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// Audit events go to the log; plugin/* events cannot be forged through
// Record. Seen failing with the plugin/ prefix check removed.
func TestRecordEventsAndCode(t *testing.T) {
	ctx := context.Background()
	k, exec := newKernel(t)
	exec.Register("x", noop)
	if err := kerneltest.Agent(ctx, k, kernel.Manifest{ID: "agent.x", Version: "1"}, "x"); err != nil {
		t.Fatal(err)
	}
	if err := k.Record(ctx, "judge/submitted", "agent.x", map[string]string{"by": "me"}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, k.Record(ctx, kernel.EventPluginUninstalled, "agent.x", nil), kernel.CodeValidation)
	wantCode(t, k.Record(ctx, "nonamespace", "", nil), kernel.CodeValidation)
	events, err := k.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Type != "judge/submitted" || string(last.Data) != `{"by":"me"}` {
		t.Fatalf("last event = %+v, want judge/submitted with data", last)
	}
	target, _ := kernel.FoldTarget(events)
	code, err := k.Code(ctx, target["agent.x"].CodeHash)
	if err != nil || string(code) != "x" {
		t.Fatalf("Code = %q, %v; want x", code, err)
	}
	_, err = k.Code(ctx, "sha256:missing")
	wantCode(t, err, kernel.CodeNotFound)
}
