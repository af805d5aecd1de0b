package adminapi_test

import (
	"strings"
	"testing"

	"github.com/sms-baseline/sms/judge"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// On a kernel that needs two approvers from leads, an admin credential
// relays each approver's name and groups (as the operator does): the first
// approval leaves the plugin pending and shows on the approval with who
// and when, the second mounts it. A credential without the admin scope
// cannot relay groups. Seen failing with decide not passing the groups on
// (403: bo is in none of the approver groups).
func TestSeveralApproversThroughTheAPI(t *testing.T) {
	f := setup(t, options{token: token, policy: judge.Policy{RequiredApprovers: 2, ApproverGroups: []string{"leads"}},
		creds: []smshttp.Credential{{Name: "reviewer", Token: "rv", Scopes: []smshttp.Scope{smshttp.ScopeRead, smshttp.ScopeApprove}}}})
	if status, body := submitAs(t, f, token, "ada"); status != 200 || !strings.Contains(body, `"pending"`) {
		t.Fatalf("submit = %d %s", status, body)
	}
	a := approvals(t, f)[0]
	decide := func(tok, by string, groups []string) reply {
		return f.do(t, request{"POST", "/api/approvals/" + a.ID + "/approve", tok,
			map[string]any{"by": by, "codeHash": a.CodeHash, "groups": groups}})
	}
	if r := decide("rv", "reviewer", []string{"leads"}); r.status != 403 || !strings.Contains(r.text, "relays the groups") {
		t.Fatalf("groups from a credential without admin = %d %s, want 403", r.status, r.text)
	}
	if r := decide(token, "bo", []string{"leads"}); r.status != 200 || !strings.Contains(r.text, "needs 1 more from leads") {
		t.Fatalf("first approval = %d %s, want pending", r.status, r.text)
	}
	if d := approvals(t, f)[0].Decisions; len(d) != 1 || d[0].By != "bo" || d[0].At.IsZero() {
		t.Fatalf("decisions on the approval = %+v, want bo's", d)
	}
	if r := decide(token, "cy", []string{"leads"}); r.status != 200 || !strings.Contains(r.text, `"mounted"`) {
		t.Fatalf("second approval = %d %s, want mounted", r.status, r.text)
	}
}
