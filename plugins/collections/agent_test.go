package collections_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
	"github.com/sms-baseline/sms/plugins/collections"
)

// tasksManifest declares two collections the way an agent plugin does:
// JSON in manifest.contributes.
func tasksManifest() kernel.Manifest {
	field := func(name, typ string, extra ...any) map[string]any {
		m := map[string]any{"name": name, "type": typ}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	return kernel.Manifest{ID: "agent.tasks", Version: "1", Inject: []string{collections.Key}, Scopes: []string{"db.write"}, Points: []string{collections.HookPoint},
		Contributes: map[string][]any{collections.CollectionPoint: {
			map[string]any{"name": "task", "fields": []any{field("title", "text", "required", true), field("votes", "integer", "default", 0)}},
			map[string]any{"name": "task_log", "fields": []any{field("task", "integer"), field("title", "text")}},
		}}}
}

// tasksScript contributes a before hook that refuses spam and an after
// hook that writes a log record through cap.invoke.
func tasksScript(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
	reject := u.Func("reject", func(_ context.Context, args []any) (any, error) {
		if args[0].(map[string]any)["record"].(map[string]any)["title"] == "spam" {
			return nil, errors.New("no spam")
		}
		return nil, nil
	})
	logIt := u.Func("log", func(ctx context.Context, args []any) (any, error) {
		rec := args[0].(map[string]any)["record"].(map[string]any)
		_, err := h.Invoke(ctx, collections.Key, "create",
			kerneltest.JSON([]any{"task_log", map[string]any{"task": rec["id"], "title": rec["title"]}}))
		return nil, err
	})
	for _, hook := range []map[string]any{
		{"collection": "task", "on": "create", "when": "before", "handler": reject},
		{"collection": "task", "on": "create", "handler": logIt},
	} {
		if _, err := h.Contribute(ctx, collections.HookPoint, kerneltest.JSON(hook)); err != nil {
			return err
		}
	}
	return nil
}

// An agent plugin defines collections declaratively and hooks them with its
// own functions; disabling it takes the collections and hooks away and
// keeps the data, enabling it brings both back. Seen failing with parseHook
// not accepting an agent's function handler, and with the after hooks of
// create never run (no log record).
func TestAgentCollectionAndHooks(t *testing.T) {
	ctx := context.Background()
	f := boot(t, openSQLite(t))
	f.exec.Register("tasks", tasksScript)
	if err := kerneltest.Agent(ctx, f.k, tasksManifest(), "tasks"); err != nil {
		t.Fatalf("propose agent.tasks: %v", err)
	}
	f.wantError(t, "validation", req{"POST", "/api/collections/task", `{"title":"spam"}`},
		`create rejected by a hook of plugin agent.tasks: no spam`)
	got := f.want(t, 201, req{"POST", "/api/collections/task", `{"title":"hello"}`})
	if got["votes"] != float64(0) || got["id"] != float64(1) {
		t.Fatalf("created task = %s, want id 1 and votes 0", jsonOf(got))
	}
	if logs := f.records(t, "task_log"); len(logs) != 1 || logs[0]["task"] != float64(1) || logs[0]["title"] != "hello" {
		t.Fatalf("task_log = %s, want one record for task 1", jsonOf(logs))
	}

	if err := f.k.Disable(ctx, "agent.tasks"); err != nil {
		t.Fatal(err)
	}
	f.wantError(t, "not_found", req{"GET", "/api/collections/task", ""}, `no collection "task"`)
	if err := f.k.Enable(ctx, "agent.tasks"); err != nil {
		t.Fatal(err)
	}
	if recs := f.records(t, "task"); len(recs) != 1 || recs[0]["title"] != "hello" {
		t.Fatalf("tasks after enabling again = %s, want the hello task", jsonOf(recs))
	}
	f.wantError(t, "validation", req{"POST", "/api/collections/task", `{"title":"spam"}`}, "no spam")
}

// invoker calls the collections key the way agent code does.
type invoker struct {
	t    *testing.T
	host kernel.HostBridge
}

func (iv invoker) call(method string, args ...any) (any, error) {
	if args == nil {
		args = []any{}
	}
	raw, err := iv.host.Invoke(context.Background(), collections.Key, method, kerneltest.JSON(args))
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		iv.t.Fatalf("invoke %s: result %s is not JSON: %v", method, raw, err)
	}
	return out, nil
}

func (iv invoker) must(t *testing.T, method string, args ...any) string {
	t.Helper()
	out, err := iv.call(method, args...)
	if err != nil {
		t.Fatalf("invoke %s %s: %v", method, jsonOf(args), err)
	}
	return jsonOf(out)
}

// proposeReader mounts an agent plugin that injects the collections key and
// hands its host bridge to the test.
func proposeReader(t *testing.T, f *fixture) invoker {
	t.Helper()
	var host kernel.HostBridge
	f.exec.Register("reader", func(_ context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		host = h
		return nil
	})
	m := kernel.Manifest{ID: "agent.reader", Version: "1", Inject: []string{collections.Key}, Scopes: []string{"db.write"}}
	if err := kerneltest.Agent(context.Background(), f.k, m, "reader"); err != nil {
		t.Fatalf("propose agent.reader: %v", err)
	}
	return invoker{t: t, host: host}
}

// Agent code calls every service method through HostBridge.Invoke with JSON
// arguments. Seen failing with the collections key's consumer trust raised
// to system, and with list ignoring its options object.
func TestInvokeFromAgent(t *testing.T) {
	f := boot(t, openSQLite(t), invoiceApp())
	iv := proposeReader(t, f)
	for _, c := range []map[string]any{
		{"customer": "a", "amount": 1, "paid": true}, {"customer": "b", "amount": 2}, {"customer": "c", "amount": 3},
	} {
		iv.must(t, "create", "invoice", c)
	}
	cases := []struct {
		method string
		args   []any
		want   string
	}{
		{"list", []any{"invoice", map[string]any{"where": map[string]any{"paid": false}, "limit": 10}}, `"customer":"b"`},
		{"list", []any{"invoice", map[string]any{"limit": 1, "offset": 2}}, `"customer":"c"`},
		{"get", []any{"invoice", 2}, `"customer":"b"`},
		{"update", []any{"invoice", 2, map[string]any{"amount": 20.5}}, `"amount":20.5`},
		{"delete", []any{"invoice", 3}, `{"deleted":true,"id":3}`},
		{"definition", []any{"invoice"}, `"name":"invoice"`},
		{"definitions", nil, `"name":"invoice"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.method, func(t *testing.T) {
			if got := iv.must(t, tc.method, tc.args...); !strings.Contains(got, tc.want) {
				t.Fatalf("invoke %s %s = %s, want it to contain %s", tc.method, jsonOf(tc.args), got, tc.want)
			}
		})
	}
	if got := iv.must(t, "list", "invoice", map[string]any{"where": map[string]any{"paid": false}}); strings.Count(got, `"id"`) != 1 {
		t.Fatalf("unpaid invoices after the delete = %s, want only b", got)
	}
	raw, err := iv.host.Get(context.Background(), collections.Key)
	if err != nil || !strings.HasPrefix(string(raw), `{"collections":[{"name":"invoice","fields":[{"name":"customer"`) {
		t.Fatalf("cap.get(collections) = %s, %v; want the definitions", raw, err)
	}
}

// Bad calls from agent code fail with errors that say what to fix and
// wrap the contract's sentinels. Seen failing with argListOptions accepting
// unknown options.
func TestInvokeErrors(t *testing.T) {
	f := boot(t, openSQLite(t), invoiceApp())
	iv := proposeReader(t, f)
	cases := []struct {
		method string
		args   []any
		is     error
		msg    string
	}{
		{"drop", nil, collections.ErrInvalid, `collections has no method "drop"; it has create, definition, definitions, delete, get, list, update`},
		{"list", nil, collections.ErrInvalid, "argument 1 must be a collection name, got nothing"},
		{"list", []any{7}, collections.ErrInvalid, "argument 1 must be a collection name, got the number 7"},
		{"list", []any{"invoice", map[string]any{"colour": 1}}, collections.ErrInvalid, `unknown list option "colour"`},
		{"list", []any{"invoice", map[string]any{"limit": "ten"}}, collections.ErrInvalid, `list option limit must be a whole number`},
		{"list", []any{"invoice", map[string]any{"where": []any{}}}, collections.ErrInvalid, `list option where must be an object`},
		{"list", []any{"invoice", map[string]any{"limit": 5000}}, collections.ErrInvalid, "limit 5000 must be between 1 and 1000"},
		{"list", []any{"invoice", "all"}, collections.ErrInvalid, "argument 2 must be an object of list options"},
		{"get", []any{"invoice"}, collections.ErrInvalid, "argument 2 must be a record id, got nothing"},
		{"get", []any{"invoice", 1.5}, collections.ErrInvalid, "argument 2 must be a record id"},
		{"get", []any{"invoice", 99}, collections.ErrNotFound, `collection "invoice" has no record 99`},
		{"get", []any{"nope", 1}, collections.ErrNotFound, `no collection "nope"`},
		{"definition", []any{"nope"}, collections.ErrNotFound, `no collection "nope"`},
		{"definition", nil, collections.ErrInvalid, "argument 1 must be a collection name"},
		{"create", []any{"invoice"}, collections.ErrInvalid, "argument 2 must be an object of the values, got nothing"},
		{"create", []any{"invoice", map[string]any{"amount": 1}}, collections.ErrInvalid, `field "customer" is required`},
		{"update", []any{"invoice", 1}, collections.ErrInvalid, "argument 3 must be an object of the values"},
		{"update", []any{"invoice"}, collections.ErrInvalid, "argument 2 must be a record id"},
		{"delete", []any{"invoice", 1}, collections.ErrNotFound, `collection "invoice" has no record 1`},
		{"delete", []any{}, collections.ErrInvalid, "argument 1 must be a collection name"},
	}
	for _, tc := range cases {
		t.Run(tc.method+jsonOf(tc.args), func(t *testing.T) {
			_, err := iv.call(tc.method, tc.args...)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("invoke %s %s error = %v, want %v containing %q", tc.method, jsonOf(tc.args), err, tc.is, tc.msg)
			}
		})
	}
}

// Only system fibers may provide the collections key. Seen failing with
// its MinProviderTrust lowered to agent (the agent then got a conflict,
// not a trust error).
func TestAgentCannotProvideCollections(t *testing.T) {
	f := boot(t, openSQLite(t))
	f.exec.Register("impostor", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		return h.Provide(ctx, collections.Key, kerneltest.JSON(map[string]any{}))
	})
	m := kernel.Manifest{ID: "agent.impostor", Version: "1", Provide: []string{collections.Key}}
	err := kerneltest.Agent(context.Background(), f.k, m, "impostor")
	if kernel.CodeOf(err) != kernel.CodeTrust {
		t.Fatalf("agent providing collections = %v, want a trust error", err)
	}
}
