package v1

import "testing"

// forbidSelfApproval compares the Kubernetes user deciding with whoever
// asked: a Kubernetes requester by name, and an application user
// (user:<login>, a chat of the kernel's) through spec.users.kubernetesUsers
// or, unlisted, the same name. Seen failing with the application user's
// prefix not stripped (cleo approved cleo's chat-made plugin).
func TestIsRequester(t *testing.T) {
	mapped := &Tenant{Spec: TenantSpec{Users: &TenantUsers{KubernetesUsers: map[string]string{"cleo": "cleo@example.com"}}}}
	plain := &Tenant{}
	for _, c := range []struct {
		name, decider, requestedBy, annotation string
		tenant                                 *Tenant
		want                                   bool
	}{
		{"kubernetes requester", "alice", "alice", "", plain, true},
		{"annotated requester", "alice", "", "alice", plain, true},
		{"someone else", "bob", "alice", "alice", plain, false},
		{"app user, same name", "cleo", "user:cleo", "", plain, true},
		{"app user, mapped", "cleo@example.com", "user:cleo", "", mapped, true},
		{"app user, mapped away from the same name", "cleo", "user:cleo", "", mapped, false},
		{"app user, another person", "bob", "user:cleo", "", plain, false},
		{"empty login", "", "user:", "", plain, false},
		{"no decider", "", "alice", "alice", plain, false},
	} {
		a := &Approval{Spec: ApprovalSpec{RequestedBy: c.requestedBy}}
		p := &Plugin{}
		p.Annotations = map[string]string{AnnotationRequestedBy: c.annotation}
		if got := IsRequester(c.decider, a, p, c.tenant); got != c.want {
			t.Errorf("%s: IsRequester(%q) = %v, want %v", c.name, c.decider, got, c.want)
		}
	}
}
