package services

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/audit"
	"github.com/sms-baseline/sms/plugins/orm"
)

// tracked tracks the invoice's state and amount.
func tracked() kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.tracked", Version: "1", Inject: []string{audit.Key},
		Contributes: map[string][]any{audit.TrackPoint: {audit.Track{Model: "invoice", Fields: []string{"state", "amount"}}}}}}
}

func (e *env) thread(h map[string][]string, id int64) map[string]any {
	e.t.Helper()
	r := e.Do("GET", fmt.Sprintf("/api/audit/invoice/%d", id), nil, h)
	if r.Status != 200 {
		e.t.Fatalf("thread of invoice %d: %d %s", id, r.Status, r.Body)
	}
	return r.JSON.(map[string]any)
}

func messages(th map[string]any) []string {
	var out []string
	for _, m := range th["messages"].([]any) {
		out = append(out, m.(map[string]any)["kind"].(string)+": "+m.(map[string]any)["body"].(string))
	}
	return out
}

func (e *env) ormService() orm.Service {
	v, err := e.Kernel.GetValue(orm.Key)
	if err != nil {
		e.t.Fatal(err)
	}
	return v.(orm.Service)
}

// TestAuditTracking: a write that changes a tracked field posts one
// tracking message per record with the old and new values; a write of an
// untracked field, or of a tracked field to the value it had, posts none,
// and neither does a batch that rolled back. Seen failing with the ORM's
// snapshot taken after the update (no change was ever seen).
func TestAuditTracking(t *testing.T) {
	e := boot(t, options{plugins: []kernel.Plugin{tracked()}})
	cleo := e.user("cleo", "clerks")
	id := e.create(cleo, map[string]any{"number": "C-1", "amount": 10})
	write := func(values map[string]any) {
		t.Helper()
		if r := e.Do("POST", "/api/orm/invoice/write", map[string]any{"ids": []int64{id}, "values": values}, cleo); r.Status != 200 {
			t.Fatalf("write %v: %d %s", values, r.Status, r.Body)
		}
	}
	write(map[string]any{"amount": 20, "note": "x"})
	write(map[string]any{"note": "y"})
	write(map[string]any{"amount": 20})
	write(map[string]any{"state": "paid", "amount": 25})
	answers(t, e.rpc(cleo, []any{
		call(1, "write", "invoice", []any{id}, map[string]any{"amount": 1000}),
		call(2, "create", "invoice", map[string]any{}),
	}))
	got := messages(e.thread(cleo, id))
	want := []string{"tracking: amount: 25 → 1000"} // must not be there
	if len(got) != 2 || got[0] != "tracking: amount: 20 → 25\nstate: draft → paid" || got[1] != "tracking: amount: 10 → 20" {
		t.Fatalf("messages = %q; want the two changes, newest first, and not %q", got, want)
	}
}

// TestAuditThreadRoutes: a record's thread is served to whoever may read
// the record and to no one else; posting, following and activities act
// for the caller and are bounded.
func TestAuditThreadRoutes(t *testing.T) {
	e := boot(t, options{})
	cleo, carl := e.user("cleo", "clerks"), e.user("carl", "clerks")
	id := e.create(cleo, map[string]any{"number": "C-1"})
	path := fmt.Sprintf("/api/audit/invoice/%d", id)
	if r := e.Do("POST", path+"/messages", map[string]any{"body": "hello <b>there</b>", "kind": "comment"}, cleo); r.Status != 201 {
		t.Fatalf("cleo posts: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", path, nil},
		{"POST", path + "/messages", map[string]any{"body": "sneaky"}},
		{"POST", path + "/followers", map[string]any{"userId": 3}},
		{"POST", path + "/activities", map[string]any{"summary": "call", "userId": 3}},
	} {
		if r := e.Do(c.method, c.path, c.body, carl); r.Status != 404 {
			t.Fatalf("carl %s %s on cleo's invoice: %d %s, want 404", c.method, c.path, r.Status, r.Body)
		}
	}
	if r := e.Do("GET", path, nil, nil); r.Status != 401 {
		t.Fatalf("anonymous reads a thread: %d", r.Status)
	}
	for _, bad := range []map[string]any{{"body": ""}, {"body": strings.Repeat("x", audit.MaxBodyLen+1)}, {"body": "x", "kind": "tracking"}, {"body": "x", "author": 1}} {
		if r := e.Do("POST", path+"/messages", bad, cleo); r.Status != 400 {
			t.Fatalf("bad message %.40v: %d %s", bad, r.Status, r.Body)
		}
	}
	for u := 1; u <= audit.MaxFollowers; u++ {
		if r := e.Do("POST", path+"/followers", map[string]any{"userId": u}, cleo); r.Status != 204 {
			t.Fatalf("follower %d: %d %s", u, r.Status, r.Body)
		}
	}
	if r := e.Do("POST", path+"/followers", map[string]any{"userId": audit.MaxFollowers + 1}, cleo); r.Status != 429 || !strings.Contains(string(r.Body), "100 followers per record") {
		t.Fatalf("one follower too many: %d %s", r.Status, r.Body)
	}
	if r := e.Do("DELETE", path+"/followers/7", nil, cleo); r.Status != 403 {
		t.Fatalf("cleo removes user 7: %d %s", r.Status, r.Body)
	}
	if r := e.Do("DELETE", path+"/followers/2", nil, cleo); r.Status != 204 {
		t.Fatalf("cleo (user 2) removes herself: %d %s", r.Status, r.Body)
	}
	if r := e.Do("POST", path+"/followers", map[string]any{"userId": 2}, cleo); r.Status != 204 {
		t.Fatalf("cleo follows again: %d %s", r.Status, r.Body)
	}
	r := e.Do("POST", path+"/activities", map[string]any{"summary": "call the client", "userId": 2, "due": "2026-12-24"}, cleo)
	if r.Status != 201 {
		t.Fatalf("schedule: %d %s", r.Status, r.Body)
	}
	th := e.thread(cleo, id)
	if len(th["followers"].([]any)) != audit.MaxFollowers || len(th["activities"].([]any)) != 1 || messages(th)[0] != "comment: hello <b>there</b>" {
		t.Fatalf("thread = %v", th)
	}
	// cleo is user 2: the activity is hers to see and close.
	mine := e.Do("GET", audit.RouteMine, nil, cleo)
	acts, _ := mine.JSON.(map[string]any)["activities"].([]any)
	if mine.Status != 200 || len(acts) != 1 {
		t.Fatalf("cleo's activities: %d %s", mine.Status, mine.Body)
	}
	aid := int64(acts[0].(map[string]any)["id"].(float64))
	if r := e.Do("POST", fmt.Sprintf("/api/audit/activities/%d/done", aid), nil, carl); r.Status != 404 {
		t.Fatalf("carl closes cleo's activity: %d %s", r.Status, r.Body)
	}
	if r := e.Do("POST", fmt.Sprintf("/api/audit/activities/%d/done", aid), nil, cleo); r.Status != 204 {
		t.Fatalf("cleo closes her activity: %d %s", r.Status, r.Body)
	}
}

// TestAuditCascade: unlinking a record unlinks its messages, activities
// and followers, and nothing of other records. Seen failing with the
// unlink listener removed.
func TestAuditCascade(t *testing.T) {
	e := boot(t, options{})
	mia := e.user("mia", "managers")
	gone, kept := e.create(mia, map[string]any{"number": "G-1"}), e.create(mia, map[string]any{"number": "K-1"})
	for _, id := range []int64{gone, kept} {
		path := fmt.Sprintf("/api/audit/invoice/%d", id)
		for _, req := range []struct {
			path string
			body map[string]any
		}{{"/messages", map[string]any{"body": "note"}}, {"/followers", map[string]any{"userId": 2}}, {"/activities", map[string]any{"summary": "s", "userId": 2}}} {
			if r := e.Do("POST", path+req.path, req.body, mia); r.Status/100 != 2 {
				t.Fatalf("%s: %d %s", req.path, r.Status, r.Body)
			}
		}
	}
	if r := e.Do("POST", "/api/orm/invoice/unlink", map[string]any{"ids": []int64{gone}}, mia); r.Status != 200 {
		t.Fatalf("unlink: %d %s", r.Status, r.Body)
	}
	o, sudo := e.ormService(), orm.Sudo(context.Background())
	for _, m := range []string{audit.MessageModel, audit.ActivityModel, audit.FollowerModel} {
		for id, want := range map[int64]int64{gone: 0, kept: 1} {
			n, err := o.Count(sudo, m, orm.Domain{[]any{"res_model", "=", "invoice"}, []any{"res_id", "=", id}})
			if err != nil || n != want {
				t.Fatalf("%s of invoice %d: %d (%v), want %d", m, id, n, err, want)
			}
		}
	}
}

// TestServiceOffKeepsTables: turning audit off and on again keeps its
// messages. Seen failing with the ORM dropping audit_message's table when
// it boots without the audit plugin.
func TestServiceOffKeepsTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kernel.db")
	open := func(services []string) *env {
		st, err := sqlite.OpenStore(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return boot(t, options{store: st, services: services})
	}
	e := open(nil)
	cleo := e.user("cleo", "clerks")
	id := e.create(cleo, map[string]any{"number": "C-1"})
	if r := e.Do("POST", fmt.Sprintf("/api/audit/invoice/%d/messages", id), map[string]any{"body": "kept"}, cleo); r.Status != 201 {
		t.Fatalf("post: %d %s", r.Status, r.Body)
	}
	_ = e.Close()
	e = open([]string{baseline.ServiceRPC})
	if r := e.Do("GET", fmt.Sprintf("/api/audit/invoice/%d", id), nil, e.Login("cleo", "cleo-password")); r.Status != 404 {
		t.Fatalf("audit off still serves threads: %d", r.Status)
	}
	_ = e.Close()
	e = open(nil)
	if got := messages(e.thread(e.Login("cleo", "cleo-password"), id)); len(got) != 1 || got[0] != "note: kept" {
		t.Fatalf("after audit was off: %q", got)
	}
}

// TestAuditGroup: with Options.Group the plugin grants that group read of
// its own activities through the ORM's own routes, and never messages,
// which belong to records no rule on them could check; without it the
// models are closed there. Seen failing with the rule left out of grant
// (cleo read mia's activity) and with read on messages granted (cleo read
// a note on mia's invoice).
func TestAuditGroup(t *testing.T) {
	for _, group := range []string{"", "clerks"} {
		e := boot(t, options{svc: baseline.ServiceOptions{Audit: audit.Options{Group: group}}})
		cleo, mia := e.user("cleo", "clerks"), e.user("mia", "managers")
		id := e.create(mia, map[string]any{"number": "M-1"})
		for _, uid := range []int{2, 3} { // cleo, then mia
			if r := e.Do("POST", fmt.Sprintf("/api/audit/invoice/%d/activities", id), map[string]any{"summary": "check", "userId": uid}, mia); r.Status != 201 {
				t.Fatalf("schedule: %d %s", r.Status, r.Body)
			}
		}
		if r := e.Do("POST", fmt.Sprintf("/api/audit/invoice/%d/messages", id), map[string]any{"body": "secret"}, mia); r.Status != 201 {
			t.Fatalf("post: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/orm/audit_message/search", map[string]any{}, cleo); r.Status != 403 {
			t.Fatalf("group %q: cleo searches messages: %d %s", group, r.Status, r.Body)
		}
		r := e.Do("POST", "/api/orm/audit_activity/search", map[string]any{}, cleo)
		switch {
		case group == "" && r.Status != 403:
			t.Fatalf("without a group, cleo searches activities: %d %s", r.Status, r.Body)
		case group != "" && (r.Status != 200 || fmt.Sprint(r.JSON.(map[string]any)["ids"]) != "[1]"):
			t.Fatalf("with the group, cleo's activities: %d %s, want only hers", r.Status, r.Body)
		}
	}
}

// TestAuditBoundsOnTracking: a tracked text value is cut in the message,
// and a thread pages with before. Seen failing with the values shown
// whole (a 2,000-byte body).
func TestAuditBoundsOnTracking(t *testing.T) {
	long := kernel.Plugin{Manifest: kernel.Manifest{ID: "app.tracked-note", Version: "1", Inject: []string{audit.Key},
		Contributes: map[string][]any{audit.TrackPoint: {audit.Track{Model: "invoice", Fields: []string{"note"}}}}}}
	e := boot(t, options{plugins: []kernel.Plugin{long}})
	cleo := e.user("cleo", "clerks")
	id := e.create(cleo, map[string]any{"number": "C-1"})
	e.write(cleo, id, map[string]any{"note": strings.Repeat("é", 1000)})
	got := messages(e.thread(cleo, id))
	if len(got) != 1 || len(got[0]) > 2*audit.MaxTrackedValue || !strings.HasSuffix(got[0], "…") {
		t.Fatalf("tracking message of %d bytes: %.80q", len(got[0]), got[0])
	}
	for i := range 3 {
		if r := e.Do("POST", fmt.Sprintf("/api/audit/invoice/%d/messages", id), map[string]any{"body": fmt.Sprint("m", i)}, cleo); r.Status != 201 {
			t.Fatalf("post: %d %s", r.Status, r.Body)
		}
	}
	r := e.Do("GET", fmt.Sprintf("/api/audit/invoice/%d?before=3", id), nil, cleo)
	if got := messages(r.JSON.(map[string]any)); len(got) != 2 || got[0] != "note: m0" {
		t.Fatalf("the page before message 3: %q", got)
	}
	if r := e.Do("GET", fmt.Sprintf("/api/audit/invoice/%d?before=x", id), nil, cleo); r.Status != 400 {
		t.Fatalf("before=x: %d", r.Status)
	}
}
