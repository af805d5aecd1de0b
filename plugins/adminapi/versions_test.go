package adminapi_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

func toolPlugin(version, answer string) map[string]any {
	code := `export default async function activate(cap) { return (` + answer + `) }`
	return map[string]any{"manifest": map[string]any{"id": "agent.t", "version": version}, "code": code}
}

// The versions route lists the versions of one plugin the kernel
// committed, oldest first (a version its judge rejected is none), and
// serves the code of each by its hash, only for hashes of that plugin.
// Seen failing with the events of every plugin folded in (agent.other
// answered agent.t's versions and code, in the first version of this
// route), and with the index folding the whole log again on each read
// (version 1 listed twice).
func TestPluginVersions(t *testing.T) {
	f := setup(t, options{})
	for i, p := range []map[string]any{toolPlugin("1", "1"), toolPlugin("2", "2")} {
		if r := f.do(t, request{"POST", "/api/plugins", "", p}); r.str("status") != "mounted" {
			t.Fatalf("submit: %s", r.text)
		}
		// Each read folds only what the log gained since the last.
		var got adminv1.PluginVersions
		if decode(t, f.do(t, request{"GET", "/api/plugins/agent.t/versions", "", nil}), &got); len(got.Versions) != i+1 {
			t.Fatalf("after %d versions: %+v", i+1, got.Versions)
		}
	}
	// A version whose activation throws is aborted: never a version.
	bad := map[string]any{"manifest": map[string]any{"id": "agent.t", "version": "3"},
		"code": `export default async function activate() { throw new Error('no') }`}
	if r := f.do(t, request{"POST", "/api/plugins", "", bad}); r.str("status") == "mounted" {
		t.Fatalf("a throwing activation mounted: %s", r.text)
	}
	var got adminv1.PluginVersions
	r := f.do(t, request{"GET", "/api/plugins/agent.t/versions", "", nil})
	decode(t, r, &got)
	if len(got.Versions) != 2 || got.Versions[0].Version != "1" || got.Versions[1].Version != "2" {
		t.Fatalf("versions = %s, want 1 then 2", r.text)
	}
	var code adminv1.PluginVersionCode
	r = f.do(t, request{"GET", "/api/plugins/agent.t/versions/" + url.PathEscape(got.Versions[0].CodeHash), "", nil})
	decode(t, r, &code)
	if code.Version != "1" || !strings.Contains(code.Code, "return (1)") {
		t.Fatalf("version 1's code = %s", r.text)
	}
	for _, path := range []string{"/api/plugins/agent.other/versions", "/api/plugins/agent.t/versions/sha256:00",
		"/api/plugins/agent.other/versions/" + url.PathEscape(got.Versions[0].CodeHash)} {
		if r := f.do(t, request{"GET", path, "", nil}); r.status != 404 {
			t.Fatalf("GET %s = %d %s, want 404", path, r.status, r.text)
		}
	}
}

// On a kernel that runs for a Tenant each pending approval names the
// kernel approval id the operator's Approval records and the command that
// approves it. Seen failing with the object left out of /api/state's
// pending list.
func TestApprovalsNameTheirObject(t *testing.T) {
	f := setup(t, options{tenant: &adminv1.TenantRef{Namespace: "acme", Name: "shop"}})
	v := f.do(t, request{"POST", "/api/plugins", "", routePlugin("1")})
	if v.str("status") != "pending" {
		t.Fatalf("submit: %s", v.text)
	}
	id := v.str("approvalId")
	want := adminv1.ApprovalObject{Namespace: "acme", Tenant: "shop", KernelApprovalID: id,
		Command: "kubectl sms approve -n acme --tenant shop kernel-approval/" + id}
	var approvals adminv1.Approvals
	decode(t, f.do(t, request{"GET", "/api/approvals", "", nil}), &approvals)
	var state adminv1.State
	decode(t, f.do(t, request{"GET", "/api/state", "", nil}), &state)
	var status adminv1.PluginStatus
	decode(t, f.do(t, request{"GET", "/api/plugins/agent.hello/status", "", nil}), &status)
	for name, list := range map[string][]adminv1.Approval{"approvals": approvals.Approvals, "state": state.Pending, "status": status.Pending} {
		if len(list) != 1 || list[0].Object == nil || *list[0].Object != want {
			t.Fatalf("%s: %+v, want the object %+v", name, list, want)
		}
	}
}

func decode(t *testing.T, r reply, into any) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.text)
	}
	if err := json.Unmarshal([]byte(r.text), into); err != nil {
		t.Fatalf("decode %s: %v", r.text, err)
	}
}
