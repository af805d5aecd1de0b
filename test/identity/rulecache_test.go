package identity

import (
	"net/http"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/auth"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/rbac"
)

// TestRuleChangesApplyAtOnce: rbac keeps the rule domain it served a user
// and the ORM keeps the SQL it compiled from it, so a change to the user's
// groups or to the policy must reach the very next request. Seen failing
// with rbac's domain cache shared across policies and memberships.
func TestRuleChangesApplyAtOnce(t *testing.T) {
	e := boot(t, nil, auth.Options{})
	cleo, carl := e.user("cleo", "clerks"), e.user("carl", "clerks")
	for _, c := range []struct {
		h      http.Header
		number string
	}{{cleo, "C-1"}, {carl, "K-1"}} {
		if r := e.Do("POST", "/api/orm/invoice/create", map[string]any{"values": map[string]any{"number": c.number}}, c.h); r.Status != 201 {
			t.Fatalf("create %s: %d %s", c.number, r.Status, r.Body)
		}
	}
	root := e.Login(rootLogin, rootPassword)
	sees := func(step string, want int) {
		t.Helper()
		for range 2 { // the second answer comes from the caches
			r := e.Do("POST", "/api/orm/invoice/search", map[string]any{}, cleo)
			ids, _ := r.JSON.(map[string]any)["ids"].([]any)
			if r.Status != 200 || len(ids) != want {
				t.Fatalf("%s: cleo sees %d invoices (%d %s), want %d", step, len(ids), r.Status, r.Body, want)
			}
		}
	}
	sees("as a clerk", 1)
	members := rbac.RouteGroups + "/managers/members"
	if r := e.Do("POST", members, map[string]any{"login": "cleo"}, root); r.Status != 200 {
		t.Fatalf("add cleo to managers: %d %s", r.Status, r.Body)
	}
	sees("as a manager", 2)
	if r := e.Do("DELETE", members+"/cleo", nil, root); r.Status != 204 {
		t.Fatalf("remove cleo from managers: %d %s", r.Status, r.Body)
	}
	sees("a clerk again", 1)
	// A global rule mounted later narrows every domain; uninstalling it
	// (forced: it is a system plugin) widens them again.
	hide := kernel.Plugin{Manifest: kernel.Manifest{ID: "app.hide-c", Version: "1", Inject: []string{rbac.Key},
		Contributes: map[string][]any{rbac.RulePoint: {
			rbac.Rule{Name: "no C", Model: "invoice", Domain: orm.Domain{[]any{"number", "!=", "C-1"}}},
		}}}}
	if err := e.Kernel.Install(hide); err != nil {
		t.Fatal(err)
	}
	if err := e.Kernel.Enable(t.Context(), hide.Manifest.ID); err != nil {
		t.Fatal(err)
	}
	sees("under the global rule", 0)
	if err := e.Kernel.Uninstall(t.Context(), hide.Manifest.ID, true); err != nil {
		t.Fatal(err)
	}
	sees("without it", 1)
}
