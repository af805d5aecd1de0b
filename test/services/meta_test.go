package services

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/meta"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/rbac"
	"github.com/sms-baseline/sms/plugins/rpc"
)

// screens is the application's views, actions and menus, and a secret
// model no clerk may read.
func screens() []kernel.Plugin {
	secret := kernel.Plugin{Manifest: kernel.Manifest{ID: "app.secret", Version: "1", Inject: []string{orm.Key},
		Contributes: map[string][]any{
			orm.ModelPoint: {orm.Model{Name: "secret", Fields: map[string]orm.Field{"name": {Kind: orm.KindChar}}}},
		}}}
	return []kernel.Plugin{secret, {Manifest: kernel.Manifest{ID: "app.screens", Version: "1", Inject: []string{meta.Key, orm.Key, rbac.Key},
		Contributes: map[string][]any{
			meta.ViewPoint: {
				meta.View{Name: "invoice.form", Model: "invoice", Type: "form", Fields: []meta.ViewField{{Name: "number"}, {Name: "amount"}}},
				meta.View{Name: "invoice.form.state", Model: "invoice", Type: "form", Inherit: "invoice.form", After: "number",
					Fields: []meta.ViewField{{Name: "state"}}, Remove: []string{"amount"}},
				meta.View{Name: "invoice.form.label", Model: "invoice", Type: "form", Inherit: "invoice.form.state",
					Fields: []meta.ViewField{{Name: "state", Label: "Status", ReadOnly: true}}},
				meta.View{Name: "invoice.list", Model: "invoice", Type: "list", Fields: []meta.ViewField{{Name: "number"}}},
			},
			meta.ActionPoint: {
				meta.Action{Name: "invoices", Label: "Invoices", Model: "invoice"},
				meta.Action{Name: "secrets", Label: "Secrets", Model: "secret"},
			},
			meta.MenuPoint: {
				meta.Menu{Name: "billing", Label: "Billing"},
				meta.Menu{Name: "billing.invoices", Parent: "billing", Action: "invoices", Sequence: 1},
				meta.Menu{Name: "vault", Label: "Vault"},
				meta.Menu{Name: "vault.secrets", Parent: "vault", Action: "secrets"},
			},
		}}}}
}

func (e *env) metaCall(h map[string][]string, method string, params ...any) any {
	e.t.Helper()
	r := e.Do("POST", rpc.MetaPath, call(1, method, params...), h)
	m, _ := r.JSON.(map[string]any)
	if r.Status != 200 || m["error"] != nil {
		e.t.Fatalf("meta %s%v: %d %s", method, params, r.Status, r.Body)
	}
	return m["result"]
}

func fieldsOf(v any) string {
	var names []string
	for _, f := range v.(map[string]any)["fields"].([]any) {
		fm := f.(map[string]any)
		n := fm["name"].(string)
		if l, ok := fm["label"].(string); ok {
			n += "(" + l + ")"
		}
		names = append(names, n)
	}
	return strings.Join(names, ",")
}

func menuNames(v any) string {
	raw, _ := json.Marshal(v)
	var nodes []meta.MenuNode
	_ = json.Unmarshal(raw, &nodes)
	var walk func([]meta.MenuNode) string
	walk = func(ns []meta.MenuNode) string {
		var out []string
		for _, n := range ns {
			s := n.Name
			if len(n.Children) > 0 {
				s += "[" + walk(n.Children) + "]"
			}
			out = append(out, s)
		}
		return strings.Join(out, " ")
	}
	return walk(nodes)
}

// TestMetaViewsAndMenus: a view compiles with its extensions applied,
// parents first; the menu tree leaves out what the caller may not read.
// Seen failing with extensions applied in name order (the label came
// before the field it labels existed) and with menus not cut by access.
func TestMetaViewsAndMenus(t *testing.T) {
	e := boot(t, options{plugins: screens()})
	cleo, root := e.user("cleo", "clerks"), e.Login(rootLogin, rootPassword)
	if got := fieldsOf(e.metaCall(cleo, "view", "invoice", "form")); got != "number,state(Status)" {
		t.Fatalf("the compiled form = %s", got)
	}
	if views := e.metaCall(cleo, "views", "invoice").([]any); len(views) != 2 {
		t.Fatalf("views = %v, want the list and the form", views)
	}
	if got := menuNames(e.metaCall(cleo, "menus")); got != "billing[billing.invoices]" {
		t.Fatalf("cleo's menus = %s", got)
	}
	if got := menuNames(e.metaCall(root, "menus")); got != "billing[billing.invoices] vault[vault.secrets]" {
		t.Fatalf("root's menus = %s", got)
	}
	r := e.Do("POST", rpc.MetaPath, []any{call(1, "view", "invoice", "kanban"), call(2, "action", "secrets"), call(3, "actions")}, cleo)
	got := answers(t, r)
	if code(got[1]) != rpc.CodeNotFound || code(got[2]) != rpc.CodeNotFound || len(got[3]["result"].([]any)) != 1 {
		t.Fatalf("no kanban view, no secrets for cleo, one action: %v", got)
	}
}

// TestMetaValidation: an item naming an unknown model, field, parent view,
// action or parent menu is refused by name, and so is one past a bound.
func TestMetaValidation(t *testing.T) {
	e := boot(t, options{plugins: screens()})
	deep := []any{}
	parent := "invoice.list"
	for i := range meta.MaxInheritDepth {
		name := "deep" + string(rune('a'+i))
		deep = append(deep, meta.View{Name: name, Model: "invoice", Type: "list", Inherit: parent})
		parent = name
	}
	for i, c := range []struct {
		point string
		items []any
		want  string
	}{
		{meta.ViewPoint, []any{meta.View{Name: "v", Model: "nope", Type: "form"}}, `unknown model "nope"`},
		{meta.ViewPoint, []any{meta.View{Name: "v", Model: "invoice", Type: "form", Fields: []meta.ViewField{{Name: "nope"}}}}, `has no field "nope"`},
		{meta.ViewPoint, []any{meta.View{Name: "v", Model: "invoice", Type: "form", Inherit: "nope"}}, `unknown parent view "nope"`},
		{meta.ViewPoint, []any{meta.View{Name: "v", Model: "invoice", Type: "grid"}}, `type "grid"`},
		{meta.ViewPoint, []any{meta.View{Name: "invoice.form", Model: "invoice", Type: "form"}}, `view "invoice.form" exists`},
		{meta.ViewPoint, deep, "inheritance depth 9 passes the limit of 8"},
		{meta.ActionPoint, []any{meta.Action{Name: "a", Model: "invoice", Domain: orm.Domain{[]any{"nope", "=", 1}}}}, "nope"},
		{meta.MenuPoint, []any{meta.Menu{Name: "m", Parent: "nope"}}, `unknown parent menu "nope"`},
		{meta.MenuPoint, []any{meta.Menu{Name: "m", Action: "nope"}}, `unknown action "nope"`},
	} {
		p := kernel.Plugin{Manifest: kernel.Manifest{ID: "app.bad" + string(rune('a'+i)), Version: "1", Inject: []string{meta.Key},
			Contributes: map[string][]any{c.point: c.items}}}
		if err := e.Kernel.Install(p); err != nil {
			t.Fatal(err)
		}
		err := e.Kernel.Enable(t.Context(), p.Manifest.ID)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("case %d: enable = %v, want an error naming %s", i, err, c.want)
		}
	}
	// Nothing of the refused plugins stays.
	if got := fieldsOf(e.metaCall(e.Login(rootLogin, rootPassword), "view", "invoice", "list")); got != "number" {
		t.Fatalf("the list after the refusals = %s", got)
	}
}

// agentScreens is an agent plugin adding a field to the form, an action
// and a menu under billing.
const agentScreens = `export default async function activate(cap) {
  await cap.contribute('view', {name: 'agent.form', model: 'invoice', type: 'form', inherit: 'invoice.form', after: 'number', fields: [{name: 'note'}]})
  await cap.contribute('action', {name: 'drafts', label: 'Drafts', model: 'invoice', domain: [['state', '=', 'draft']]})
  await cap.contribute('menu', {name: 'billing.drafts', parent: 'billing', action: 'drafts', sequence: 2})
}`

// TestMetaAgentAddsAndDisableRemoves: an agent plugin adds a view
// extension, an action and a menu; disabling it removes exactly those.
// Seen failing with a removal that did not check the contribution id (the
// old version's removal took the items the new version had taken over).
func TestMetaAgentAddsAndDisableRemoves(t *testing.T) {
	e := boot(t, options{plugins: screens()})
	root, admin := e.Login(rootLogin, rootPassword), bearer(token)
	submit := func(version string) {
		t.Helper()
		r := e.Do("POST", "/api/plugins", map[string]any{"code": agentScreens, "manifest": map[string]any{
			"id": "agent.screens", "version": version, "points": []string{meta.ViewPoint, meta.ActionPoint, meta.MenuPoint}}}, admin)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"mounted"`) {
			t.Fatalf("submit v%s: %d %s", version, r.Status, r.Body)
		}
	}
	submit("1")
	if got := fieldsOf(e.metaCall(root, "view", "invoice", "form")); got != "number,state(Status),note" {
		t.Fatalf("with the agent's extension: %s", got)
	}
	if got := menuNames(e.metaCall(root, "menus")); got != "billing[billing.invoices billing.drafts] vault[vault.secrets]" {
		t.Fatalf("with the agent's menu: %s", got)
	}
	submit("2") // the new version takes over its own names
	if got := menuNames(e.metaCall(root, "menus")); got != "billing[billing.invoices billing.drafts] vault[vault.secrets]" {
		t.Fatalf("after the update: %s", got)
	}
	if r := e.Do("POST", "/api/plugins/agent.screens/disable", nil, admin); r.Status != 200 {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	if got := fieldsOf(e.metaCall(root, "view", "invoice", "form")); got != "number,state(Status)" {
		t.Fatalf("after disable: %s", got)
	}
	if got := menuNames(e.metaCall(root, "menus")); got != "billing[billing.invoices] vault[vault.secrets]" {
		t.Fatalf("menus after disable: %s", got)
	}
}

// TestMetaAgentCannotReplaceScreens: an agent's primary view never takes
// the place of a system plugin's, a priority is bounded, and one agent
// plugin cannot use up the kernel's items. Seen failing with primary views
// ranked by priority alone (the agent's form replaced the application's)
// and with the per-plugin count removed (65 menus mounted).
func TestMetaAgentCannotReplaceScreens(t *testing.T) {
	e := boot(t, options{plugins: screens()})
	root, admin := e.Login(rootLogin, rootPassword), bearer(token)
	submit := func(id, code string) string {
		t.Helper()
		r := e.Do("POST", "/api/plugins", map[string]any{"code": code, "manifest": map[string]any{
			"id": id, "version": "1", "points": []string{meta.ViewPoint, meta.MenuPoint}}}, admin)
		return string(r.Body)
	}
	form := `export default async function activate(cap) {
  await cap.contribute('view', {name: 'agent.f', model: 'invoice', type: 'form', priority: %d, fields: [{name: 'amount', label: 'Pay to IBAN XX00'}]})
}`
	if got := submit("agent.low", fmt.Sprintf(form, -1)); !strings.Contains(got, "priority -1 must be from 0 to 1000") {
		t.Fatalf("a negative priority: %s", got)
	}
	if got := submit("agent.form", fmt.Sprintf(form, 0)); !strings.Contains(got, `"mounted"`) {
		t.Fatalf("the agent's form: %s", got)
	}
	if got := fieldsOf(e.metaCall(root, "view", "invoice", "form")); got != "number,state(Status)" {
		t.Fatalf("the form everyone sees = %s", got)
	}
	menus := `export default async function activate(cap) {
  for (let i = 0; i < 65; i++) await cap.contribute('menu', {name: 'agent.m' + i, label: 'M'})
}`
	if got := submit("agent.menus", menus); !strings.Contains(got, "the limit is 64 per agent plugin") {
		t.Fatalf("65 menus: %s", got)
	}
}
