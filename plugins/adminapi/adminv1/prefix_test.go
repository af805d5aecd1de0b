package adminv1_test

import (
	"testing"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// Only the admin API's own routes move under a prefix: the users', the
// ORM's and the probes keep their paths. Seen failing with Prefixed
// moving every /api path (the sign-in went to /sms-admin/auth/login).
func TestPrefixed(t *testing.T) {
	for in, want := range map[string]string{
		"/api/state": "/x/state", "/api/plugins/agent.a/enable": "/x/plugins/agent.a/enable", "/api/chat/stream": "/x/chat/stream",
		"/api/events": "/x/events", "/api/auth/login": "/api/auth/login", "/api/orm/invoice/search": "/api/orm/invoice/search",
		"/api/statex": "/api/statex", "/healthz": "/healthz", "/metrics": "/metrics",
	} {
		if got := adminv1.Prefixed(in, "/x"); got != want {
			t.Errorf("Prefixed(%q) = %q, want %q", in, got, want)
		}
	}
	if got := adminv1.Prefixed("/api/state", ""); got != "/api/state" {
		t.Errorf("no prefix moved /api/state to %q", got)
	}
	for _, bad := range []string{"", "x", "/x/", "/a//b", "/a/../b", "/a b", "/é"} {
		if adminv1.CheckPrefix(bad) == nil {
			t.Errorf("CheckPrefix(%q) accepted it", bad)
		}
	}
	if err := adminv1.CheckPrefix("/sms/admin-1"); err != nil {
		t.Error(err)
	}
}
