package baselinetest_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/kernel"
)

// route is an agent plugin contributing a route, which is sensitive.
var route = map[string]any{
	"manifest": map[string]any{"id": "agent.hello", "version": "1", "points": []string{"route"}},
	"code": `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/hello', handler: async () => ({ body: { hello: 'world' } }) })
}`,
}

// counting is an executor that counts the plugins it loads.
type counting struct {
	kernel.Executor
	loads atomic.Int32
}

func (c *counting) Load(ctx context.Context, b kernel.Bundle) (kernel.Unit, error) {
	c.loads.Add(1)
	return c.Executor.Load(ctx, b)
}

// A test kernel mounts a sensitive plugin at once unless the test asks for
// approvals, as production has them; it runs agent code on the executor
// the test gives. Seen failing with Approvals ignored (mounted both times)
// and with Executor left out of baseline.Options (no load counted).
func TestApprovalsAndExecutor(t *testing.T) {
	exec := &counting{Executor: goja.New(goja.Options{})}
	quick := baselinetest.New(t, baselinetest.Options{Executor: exec})
	if r := quick.Call("/api/plugins", route); r.Status != 200 || r.JSON.(map[string]any)["status"] != "mounted" {
		t.Fatalf("submit without approvals = %d %s, want mounted", r.Status, r.Body)
	}
	if r := quick.Do("GET", "/hello", nil, nil); r.Status != 200 {
		t.Errorf("GET /hello = %d %s", r.Status, r.Body)
	}
	if exec.loads.Load() == 0 {
		t.Error("the plugin did not run on the given executor")
	}
	strict := baselinetest.New(t, baselinetest.Options{Approvals: true})
	if r := strict.Call("/api/plugins", route); r.Status != 200 || r.JSON.(map[string]any)["status"] != "pending" {
		t.Fatalf("submit with approvals = %d %s, want pending", r.Status, r.Body)
	}
}
