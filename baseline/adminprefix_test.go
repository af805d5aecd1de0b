package baseline_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/plugins/adminapi"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// The admin API moves under Options.Admin.Prefix: its routes answer there
// and no longer under /api, the prefix is reserved for system routes (an
// agent plugin cannot take a path under it), and a client WithPrefix
// follows. A prefix that is no path is refused at boot. Seen failing with
// Prefixed applied by the client only (404 from the kernel), and with the
// reserved contribution left out (the agent's route mounted).
func TestAdminPrefix(t *testing.T) {
	ctx := context.Background()
	const token = "prefix-token"
	b, err := baseline.New(ctx, baseline.Options{AdminToken: token, Admin: adminapi.Options{Prefix: "/sms-admin"},
		Policy: judge.Policy{AutoApprove: true}}) // routes mount at once: only the reservation can stop one
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	get := func(path string) int {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	for path, want := range map[string]int{"/sms-admin/state": 200, "/api/state": 404, "/readyz": 200, "/metrics": 200} {
		if got := get(path); got != want {
			t.Errorf("GET %s = %d, want %d", path, got, want)
		}
	}
	c := adminv1.New(srv.URL, token, nil).WithPrefix("/sms-admin")
	if _, err := c.State(ctx); err != nil {
		t.Fatalf("State through a client WithPrefix: %v", err)
	}
	v, err := c.Submit(ctx, adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.squat", Version: "1", Points: []string{"route"}},
		Code: `export default async function activate(cap) { await cap.contribute('route', { method: 'GET', path: '/sms-admin/x', handler: async () => ({ body: 'mine' }) }) }`}, "")
	if err != nil || v.Status == adminv1.StatusMounted {
		t.Errorf("an agent route under the admin prefix = %+v, %v; want it refused", v, err)
	}
	if _, err := baseline.New(ctx, baseline.Options{Admin: adminapi.Options{Prefix: "admin/"}}); err == nil || !strings.Contains(err.Error(), "admin prefix") {
		t.Errorf("boot with prefix admin/ = %v, want an error naming the admin prefix", err)
	}
}
