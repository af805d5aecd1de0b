package identity

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/auth"
	"github.com/sms-baseline/sms/plugins/orm"
)

// nightly is an agent plugin whose job files an invoice "JOB" every
// second, and whose hook files an invoice "HOOK" after every other
// invoice is created.
const nightly = `export default async function activate(cap) {
  await cap.contribute('schedule', { name: 'nightly', everyMs: 1000, handler: async () => {
    await cap.invoke('orm-user', 'create', 'invoice', { number: 'JOB' })
  } })
  await cap.contribute('model-hook', { model: 'invoice', on: 'create', when: 'after', handler: async (change) => {
    if (change.values.number !== 'HOOK' && change.values.number !== 'JOB') {
      await cap.invoke('orm-user', 'create', 'invoice', { number: 'HOOK' })
    }
  } })
}`

// An agent plugin's scheduled jobs and hooks act as the user who asked
// for it, with that user's rights when they run: cleo's job and hook file
// invoices as cleo (only cleo's rule lets her see them), even when root's
// write triggers the hook; once cleo is deactivated, her job files
// nothing. Seen failing with the scheduler ignoring ActAs (the job ran
// anonymous: "anonymous callers may not create invoice") and with the
// ORM's hooks keeping the writer's context (root's write filed a HOOK
// invoice as root, which cleo could not see).
func TestJobsAndHooksActAsTheirRequester(t *testing.T) {
	opts := auth.Options{Bootstrap: &auth.Bootstrap{Login: rootLogin, Password: rootPassword}, Hash: baselinetest.FastHash}
	e := &env{t: t, Env: baselinetest.New(t, baselinetest.Options{Auth: &opts, AdminToken: token,
		Plugins: []kernel.Plugin{invoicing(), invoicingAccess()},
		Turns: [][]contracts.Block{
			{toolUse("plugin_define", map[string]any{"manifest": map[string]any{"id": "agent.nightly", "version": "1",
				"inject": []string{orm.UserKey}, "scopes": []string{"db.write"}, "points": []string{"schedule", "model-hook"}}, "code": nightly})},
			text("defined"),
		}})}
	cleo := e.user("cleo", "clerks")
	root := e.Login(rootLogin, rootPassword)
	if r := e.chat(cleo, "s", "file an invoice every night"); len(r.Steps) != 1 || !strings.Contains(r.Steps[0].Result, `"mounted"`) {
		t.Fatalf("define: %+v", r)
	}
	numbers := func(h http.Header) string {
		r := e.Do("POST", "/api/orm/invoice/search", map[string]any{"order": "id"}, h)
		if r.Status != 200 {
			t.Fatalf("search: %d %s", r.Status, r.Body)
		}
		r = e.Do("POST", "/api/orm/invoice/read", map[string]any{"ids": r.JSON.(map[string]any)["ids"], "spec": map[string]any{"number": nil}}, h)
		if r.Status != 200 {
			t.Fatalf("read: %d %s", r.Status, r.Body)
		}
		var out []string
		for _, rec := range r.JSON.(map[string]any)["records"].([]any) {
			out = append(out, rec.(map[string]any)["number"].(string))
		}
		return strings.Join(out, ",")
	}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	e.Tick(t0)
	if r := e.Do("POST", "/api/orm/invoice/create", map[string]any{"values": map[string]any{"number": "R-1"}}, root); r.Status != 201 {
		t.Fatalf("root's create: %d %s", r.Status, r.Body)
	}
	if got := numbers(cleo); got != "JOB,HOOK" {
		t.Fatalf("cleo sees %q, want her job's and her hook's invoices: JOB,HOOK (root sees %q)", got, numbers(root))
	}
	if got := numbers(root); got != "JOB,R-1,HOOK" {
		t.Fatalf("root sees %q, want JOB,R-1,HOOK", got)
	}
	if r := e.Do("POST", auth.RouteUsers+"/cleo/deactivate", map[string]any{}, root); r.Status != 200 {
		t.Fatalf("deactivate cleo: %d %s", r.Status, r.Body)
	}
	if err := e.Baseline.Tick(t.Context(), t0.Add(2*time.Second)); err == nil || !strings.Contains(err.Error(), "anonymous callers may not create invoice") {
		t.Fatalf("the job of a deactivated user: %v, want it refused as anonymous", err)
	}
	if got := numbers(root); got != "JOB,R-1,HOOK" {
		t.Fatalf("after cleo's deactivation root sees %q: her job still filed invoices", got)
	}
}
