package orm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/orm/ormtest"
)

// byName is the ContextOf of these tests: credential root is user 1, an
// admin; bob is user 2; anyone else is anonymous.
func byName(ctx context.Context) orm.OpContext {
	switch smshttp.PrincipalFrom(ctx).Name {
	case "root":
		return orm.OpContext{UserID: 1, Admin: true}
	case "bob":
		return orm.OpContext{UserID: 2}
	}
	return orm.OpContext{}
}

var creds = []smshttp.Credential{
	{Name: "root", Token: "root-token", Scopes: smshttp.Scopes},
	{Name: "bob", Token: "bob-token", Scopes: []smshttp.Scope{smshttp.ScopeRead, smshttp.ScopeAdmin}},
}

type agentEnv struct {
	*ormtest.Env
	exec *kerneltest.Executor
	srv  smshttp.Service
}

// bootGuarded boots the fixture on SQLite with credentials, byName and
// the guard that limits bob to Acme's two invoices.
func bootGuarded(t *testing.T) *agentEnv {
	t.Helper()
	exec := kerneltest.NewExecutor()
	s := ormtest.Suite{Open: openSQLite, Executor: exec, Base: []kernel.Plugin{smshttp.Plugin(smshttp.Options{Credentials: creds})}}
	e := s.Boot(t, s.Open(t), orm.Options{ContextOf: byName})
	e.Seed(t)
	if _, err := e.ORM.SetGuard(ormtest.OwnGuard(e.ID("contact", "Acme"))); err != nil {
		t.Fatal(err)
	}
	v, err := e.K.GetValue(smshttp.Key)
	if err != nil {
		t.Fatal(err)
	}
	return &agentEnv{Env: e, exec: exec, srv: v.(smshttp.Service)}
}

// probe is an agent plugin whose method and after hook count the invoices
// they can see through orm-user, and which tries what it should not.
type probe struct {
	mu      sync.Mutex
	seen    []int
	sudoArg error
}

func (p *probe) script(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
	count := func(ctx context.Context) (int, error) {
		raw, err := h.Invoke(ctx, orm.UserKey, "search", kerneltest.JSON([]any{"invoice", []any{}}))
		if err != nil {
			return 0, err
		}
		var ids []int64
		err = json.Unmarshal(raw, &ids)
		return len(ids), err
	}
	method := u.Func("probe", func(ctx context.Context, args []any) (any, error) {
		n, err := count(ctx)
		env := args[0].(map[string]any)
		return map[string]any{"seen": n, "ctx": env["ctx"]}, err
	})
	hook := u.Func("hook", func(ctx context.Context, _ []any) (any, error) {
		n, err := count(ctx)
		_, sudoErr := h.Invoke(ctx, orm.UserKey, "search", kerneltest.JSON([]any{"invoice", []any{}, map[string]any{"sudo": true}}))
		p.mu.Lock()
		p.seen, p.sudoArg = append(p.seen, n), sudoErr
		p.mu.Unlock()
		return nil, err
	})
	if _, err := h.Contribute(ctx, orm.MethodPoint, kerneltest.JSON(map[string]any{"model": "invoice", "name": "probe", "handler": method})); err != nil {
		return err
	}
	_, err := h.Contribute(ctx, orm.HookPoint, kerneltest.JSON(map[string]any{"model": "invoice", "on": "write", "handler": hook}))
	return err
}

func probeManifest() kernel.Manifest {
	return kernel.Manifest{ID: "agent.probe", Version: "1", Inject: []string{orm.UserKey}, Points: []string{orm.MethodPoint, orm.HookPoint}}
}

// An agent plugin cannot hold the orm key.
func TestAgentCannotInjectORM(t *testing.T) {
	e := bootGuarded(t)
	var got, invoked error
	e.exec.Register("greedy", func(ctx context.Context, h kernel.HostBridge, _ *kerneltest.Unit) error {
		_, got = h.Get(ctx, orm.Key)
		_, invoked = h.Invoke(ctx, orm.Key, "Search", kerneltest.JSON([]any{"invoice", []any{}}))
		return nil
	})
	_ = kerneltest.Agent(context.Background(), e.K, kernel.Manifest{ID: "agent.greedy", Version: "1", Inject: []string{orm.Key}}, "greedy")
	if kernel.CodeOf(got) != kernel.CodeTrust || kernel.CodeOf(invoked) != kernel.CodeTrust {
		t.Fatalf("agent code reading orm: %v; invoking it: %v; want trust errors", got, invoked)
	}
}

// Agent code reaches the ORM only as the user being served, never as sudo:
// not when a sudo operation calls its method or hook, not by asking.
// Seen failing (the method and hook saw all 5 invoices) with sudo left on
// in userOp and in the agent handler adapters.
func TestAgentNeverSudo(t *testing.T) {
	ctx := context.Background()
	e := bootGuarded(t)
	p := &probe{}
	e.exec.Register("probe", p.script)
	if err := kerneltest.Agent(ctx, e.K, probeManifest(), "probe"); err != nil {
		t.Fatalf("propose agent.probe: %v", err)
	}
	inv1 := e.ID("invoice", "INV-1")
	bob := smshttp.WithPrincipal(ctx, smshttp.Principal{Authenticated: true, Name: "bob"})
	root := smshttp.WithPrincipal(ctx, smshttp.Principal{Authenticated: true, Name: "root"})
	for _, c := range []struct {
		name string
		ctx  context.Context
		want float64 // invoices the agent's method sees: bob's 2, or root's 5
		user string  // the ctx the method receives
	}{
		{"sudo as bob", orm.Sudo(orm.WithOp(ctx, orm.OpContext{UserID: 2})), 2, `{"userId":2}`},
		{"bob's request", bob, 2, `{"userId":2}`},
		{"sudo over bob's request", orm.Sudo(bob), 2, `{"userId":2}`},
		{"anonymous sudo", orm.Sudo(ctx), 2, `{}`},
		{"root's request", root, 5, `{"admin":true,"userId":1}`},
	} {
		out, err := e.ORM.Call(c.ctx, "invoice", orm.MethodRequest{Method: "probe", IDs: []int64{inv1}})
		if err != nil {
			t.Fatalf("%s: call probe: %v", c.name, err)
		}
		got := out.(map[string]any)
		if got["seen"] != c.want || ormtest.Show(got["ctx"]) != c.user {
			t.Errorf("%s: the agent's method saw %v invoices as %s; want %v as %s", c.name, got["seen"], ormtest.Show(got["ctx"]), c.want, c.user)
		}
	}
	if err := e.ORM.Write(orm.Sudo(ctx), "invoice", []int64{inv1}, map[string]any{"total": 1}); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) != 1 || p.seen[0] != 2 {
		t.Errorf("the agent's hook after a sudo write saw %v invoices, want [2]", p.seen)
	}
	if p.sudoArg == nil || !strings.Contains(p.sudoArg.Error(), `unknown key "sudo"`) {
		t.Errorf("asking for sudo in the options: %v, want refused", p.sudoArg)
	}
}

// orm-user has no method that changes the guard or names a user.
func TestUserKeyMethods(t *testing.T) {
	e := bootGuarded(t)
	v, err := e.K.GetValue(orm.UserKey)
	if err != nil {
		t.Fatal(err)
	}
	inv := v.(kernel.Invoker)
	bob := smshttp.WithPrincipal(context.Background(), smshttp.Principal{Authenticated: true, Name: "bob"})
	for _, m := range []string{"setGuard", "SetGuard", "sudo", "on"} {
		if _, err := inv.Invoke(bob, m, []any{"invoice"}); !errors.Is(err, orm.ErrInvalid) {
			t.Errorf("invoke %s: %v, want refused", m, err)
		}
	}
	out, err := inv.Invoke(bob, "search_read", []any{"invoice", []any{}, []any{"number"}})
	if err != nil || len(out.([]orm.Record)) != 2 {
		t.Fatalf("bob's search_read = %v, %v; want 2 records", out, err)
	}
	if _, err := inv.Invoke(bob, "create", []any{"invoice", map[string]any{"number": "x"}, map[string]any{"sudo": true}}); err == nil ||
		!strings.Contains(err.Error(), "create takes at most 2 arguments, got 3") {
		t.Fatalf("create with an extra argument: %v, want refused", err)
	}
	if _, err := inv.Invoke(bob, "search", []any{5}); err == nil || !strings.Contains(err.Error(), "must be a model name") {
		t.Fatalf("search without a model name: %v", err)
	}
}

// Onchanges of system and agent plugins both answer a form: the agent's
// receives the values as JSON and its changes merge after the system's.
func TestOnchange(t *testing.T) {
	ctx := context.Background()
	e := bootGuarded(t)
	err := e.K.Install(kernel.Plugin{Manifest: kernel.Manifest{ID: "app.onchange", Version: "1", Inject: []string{orm.Key},
		Contributes: map[string][]any{orm.OnchangePoint: {orm.Onchange{Model: "invoice", Field: "qty",
			Handler: func(_ context.Context, ev orm.OnchangeEvent) (map[string]any, error) {
				q, _ := ev.Values["qty"].(float64)
				return map[string]any{"total": q * 10}, nil
			}}}}}})
	if err != nil || e.K.Settle(ctx) != nil {
		t.Fatalf("install: %v", err)
	}
	e.exec.Register("notes", func(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
		fn := u.Func("notes", func(_ context.Context, args []any) (any, error) {
			ev := args[0].(map[string]any)
			vals := ev["values"].(map[string]any)
			return map[string]any{"notes": fmt.Sprintf("%v items, %v", vals["qty"], vals["total"])}, nil
		})
		_, err := h.Contribute(ctx, orm.OnchangePoint, kerneltest.JSON(map[string]any{"model": "invoice", "field": "qty", "handler": fn}))
		return err
	})
	if err := kerneltest.Agent(ctx, e.K, kernel.Manifest{ID: "agent.notes", Version: "1", Points: []string{orm.OnchangePoint}}, "notes"); err != nil {
		t.Fatal(err)
	}
	status, body := e.call(t, restCall{"bob-token", "POST", "/api/orm/invoice/onchange", `{"field":"qty","values":{"qty":3}}`})
	if got := ormtest.Show(body); status != 200 || got != `{"values":{"notes":"3 items, 30","total":30}}` {
		t.Fatalf("onchange = %d %s", status, got)
	}
	if status, body := e.call(t, restCall{"bob-token", "POST", "/api/orm/invoice/onchange", `{"field":"nope","values":{}}`}); status != 400 {
		t.Fatalf("onchange of an unknown field = %d %v, want 400", status, body)
	}
}
