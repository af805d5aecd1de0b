package orm_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

// submit proposes an agent plugin through the admin API and fails unless
// it mounts.
func submit(t *testing.T, env *baselinetest.Env, manifest map[string]any, code string) {
	t.Helper()
	res := env.Call("/api/plugins", map[string]any{"manifest": manifest, "code": code})
	if res.Status != 200 || !strings.Contains(string(res.Body), `"mounted"`) {
		t.Fatalf("submit %v = %d %s, want mounted", manifest["id"], res.Status, res.Body)
	}
}

// An agent model with a computed field whose method reads the same field
// through orm-user recurses; in the goja runtime it ends at the ORM's
// depth bound with an error at once, and the kernel keeps answering. Seen
// failing without the depth bound on methods: the read stalled until the
// executor's 5 s deadline stopped the JavaScript.
func TestAgentComputeRecursionEnds(t *testing.T) {
	env := baselinetest.New(t, baselinetest.Options{Plugins: []kernel.Plugin{invoicesApp()}})
	submit(t, env, map[string]any{"id": "agent.loop", "version": "1", "inject": []string{orm.UserKey}, "points": []string{orm.MethodPoint},
		"contributes": map[string]any{orm.ModelPoint: []any{map[string]any{"name": "loop", "fields": map[string]any{
			"n":    map[string]any{"kind": "int"},
			"self": map[string]any{"kind": "computed", "returns": "int", "compute": "again"},
		}}}}},
		`export default async function activate(cap) {
  await cap.contribute('model-method', { model: 'loop', name: 'again', handler: async (env, ids) => {
    const recs = await cap.invoke('orm-user', 'read', 'loop', ids, ['self'])
    return Object.fromEntries(recs.map((r) => [r.id, (r.self || 0) + 1]))
  } })
}`)
	v, err := env.Kernel.GetValue(orm.Key)
	if err != nil {
		t.Fatal(err)
	}
	svc := v.(orm.Service)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, err := svc.Create(orm.Sudo(ctx), "loop", map[string]any{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Read(ctx, "loop", []int64{id}, orm.ReadSpec{"self": nil})
	if err == nil || !strings.Contains(err.Error(), "nested 8 deep") || ctx.Err() != nil {
		t.Fatalf("read of a self-recursive compute: %v (context: %v), want the depth bound", err, ctx.Err())
	}
	recs, err := svc.Read(ctx, "loop", []int64{id}, orm.ReadSpec{"n": nil})
	if raw, _ := json.Marshal(recs); err != nil || string(raw) != `[{"id":1,"n":1}]` {
		t.Fatalf("a plain read afterwards = %s, %v", raw, err)
	}
}

// A plugin the judge only tries leaves the database as it was: its model
// field is checked with a migration that is rolled back, and the column
// appears only once a person approves and it mounts. Seen failing with
// the field's validator migrating for real (the column was there, filled,
// while the plugin waited).
func TestPendingFieldTouchesNothing(t *testing.T) {
	env := baselinetest.New(t, baselinetest.Options{Approvals: true, Plugins: []kernel.Plugin{invoicesApp()}})
	res := env.Call("/api/plugins", map[string]any{
		"manifest": map[string]any{"id": "agent.col", "version": "1", "points": []string{orm.FieldPoint}},
		"code": `export default async function activate(cap) {
  await cap.contribute('model-field', { model: 'invoice', name: 'x', field: { kind: 'int', default: 1 } })
}`})
	var verdict struct{ Status, ApprovalID, CodeHash string }
	if err := json.Unmarshal(res.Body, &verdict); err != nil || verdict.Status != "pending" {
		t.Fatalf("submit = %d %s, want pending", res.Status, res.Body)
	}
	cols, err := env.Store.Database().Columns(context.Background(), "m_invoice")
	if err != nil || slices.Contains(cols, "x") {
		t.Fatalf("columns while pending: %v, %v; want no x", cols, err)
	}
	res = env.Call("/api/approvals/"+verdict.ApprovalID+"/approve", map[string]string{"codeHash": verdict.CodeHash})
	if res.Status != 200 {
		t.Fatalf("approve = %d %s", res.Status, res.Body)
	}
	cols, _ = env.Store.Database().Columns(context.Background(), "m_invoice")
	if !slices.Contains(cols, "x") {
		t.Fatalf("columns once mounted: %v; want x", cols)
	}
}
