package baseline_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/scheduler"
)

const invoicePlugin = `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/invoices/count',
    handler: async () => ({ body: { count: (await cap.invoke('collections', 'list', 'invoice', {})).length } }) })
}`

func agentPlugin() map[string]any {
	return map[string]any{
		"manifest": map[string]any{"id": "agent.invoices", "version": "1", "inject": []string{"collections"}, "points": []string{"route"},
			"contributes": map[string]any{"collection": []any{map[string]any{"name": "invoice",
				"fields": []any{map[string]any{"name": "amount", "type": "real", "required": true}}}}}},
		"code": invoicePlugin,
	}
}

// Every system plugin is active after New, and the admin API answers.
func TestNewBootsSystemPlugins(t *testing.T) {
	env := baselinetest.New(t, baselinetest.Options{Approvals: true})
	for _, id := range []string{baseline.DatabasePluginID, "sms.http", "sms.collections", "sms.scheduler", judge.ID, "sms.adminapi"} {
		if v, ok := env.Kernel.Fiber(id); !ok || v.State != kernel.StateActive {
			t.Fatalf("fiber %s = %+v, want active", id, v)
		}
	}
	if r := env.Call("/api/state", nil); r.Status != 200 {
		t.Fatalf("GET /api/state = %d %s", r.Status, r.Body)
	}
}

// A kernel server on the same store restores the agent plugin, its
// collection and its data. Seen failing with boot() skipping Restore.
func TestRestartRestoresPluginsAndData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kernel.db")
	boot := func() *baseline.Baseline {
		st, err := sqlite.OpenStore(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := baseline.New(ctx, baseline.Options{Store: st, Policy: judge.Policy{AutoApprove: true}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := boot()
	v := (server{t, b}).call("POST", "/api/plugins", agentPlugin())
	if !strings.Contains(v, `"status":"mounted"`) {
		t.Fatalf("submit = %s, want mounted", v)
	}
	for range 3 {
		(server{t, b}).call("POST", "/api/collections/invoice", map[string]any{"amount": 10})
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = boot()
	defer func() { _ = b.Close() }()
	if got := (server{t, b}).call("GET", "/invoices/count", nil); got != `{"count":3}` {
		t.Fatalf("after restart the agent route = %s, want {\"count\":3}", got)
	}
}

// Tick runs due scheduled jobs through the scheduler plugin.
func TestTick(t *testing.T) {
	runs := 0
	job := kernel.Plugin{Manifest: kernel.Manifest{ID: "app.job", Version: "1", Contributes: map[string][]any{
		scheduler.SchedulePoint: {scheduler.Job{Name: "count", EveryMs: 60_000, Handler: func(context.Context, scheduler.Run) error {
			runs++
			return nil
		}}},
	}}}
	env := baselinetest.New(t, baselinetest.Options{Approvals: true, Plugins: []kernel.Plugin{job}})
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	env.Tick(start)
	env.Tick(start.Add(time.Second))
	env.Tick(start.Add(time.Minute))
	if runs != 2 {
		t.Fatalf("job ran %d times, want 2 (first tick and one minute later)", runs)
	}
}

// OnClose runs once, at the first Close: a CLI model's running turns stop
// with the kernel. Seen failing with Close ignoring OnClose.
func TestCloseRunsOnCloseOnce(t *testing.T) {
	calls := 0
	b, err := baseline.New(context.Background(), baseline.Options{OnClose: func() error { calls++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	_ = b.Close()
	_ = b.Close()
	if calls != 1 {
		t.Fatalf("OnClose ran %d times, want once", calls)
	}
}
