package http_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// An agent route's answer runs sandboxed, whatever headers the agent
// sets: the kernel's policy replaces the agent's (in any letter case),
// nosniff holds, and a cookie the agent sets never reaches the caller
// (it could replace the session's). Its other headers pass. Seen failing
// with the agent's headers copied unfiltered (its cookie went out).
func TestAgentAnswersRunSandboxed(t *testing.T) {
	ctx := context.Background()
	f := secured(t)
	f.exec.Register("agent.page", func(ctx context.Context, h kernel.HostBridge, u *kerneltest.Unit) error {
		handler := u.Func("h", func(context.Context, []any) (any, error) {
			return map[string]any{"body": "<script>steal()</script>", "headers": map[string]any{
				"content-type": "text/html", "content-security-policy": "default-src *", "X-Content-Type-Options": "sniff",
				"set-cookie": "sms_session=attacker", "X-Report": "kept"}}, nil
		})
		_, err := h.Contribute(ctx, smshttp.RoutePoint, kerneltest.JSON(map[string]any{"method": "GET", "path": "/page", "handler": handler}))
		return err
	})
	if err := kerneltest.Agent(ctx, f.k, kernel.Manifest{ID: "agent.page", Version: "1", Points: []string{smshttp.RoutePoint}}, "agent.page"); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, httptest.NewRequest("GET", "/page", nil))
	h := rec.Header()
	if got := h.Values("Content-Security-Policy"); len(got) != 1 || got[0] != smshttp.AgentHeaders["Content-Security-Policy"] {
		t.Fatalf("policy = %q, want only %q", got, smshttp.AgentHeaders["Content-Security-Policy"])
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Set-Cookie") != "" {
		t.Fatalf("headers = %v: want nosniff and no cookie", h)
	}
	if h.Get("X-Report") != "kept" || h.Get("Content-Type") != "text/html" {
		t.Fatalf("headers = %v: the agent's own headers are lost", h)
	}
}
