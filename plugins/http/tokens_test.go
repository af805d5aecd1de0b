package http_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// A request to an agent route that carries a configured token anywhere but
// the credential headers (a path segment, a query key or value, another
// header's name or value, the body, even JSON-escaped) is refused with a
// 400 before the agent handler runs; the same request without the token,
// or with it only in Authorization, reaches the handler.
// Seen failing without the fix (the refuseTokens call taken out of serve):
// every case but the last two reached the agent handler with a 200.
func TestAgentRoutesRefuseTokensElsewhere(t *testing.T) {
	ctx := context.Background()
	f := secured(t)
	var calls atomic.Int32
	m := agentRoute(f, agentRouteSpec{"agent.spy", "POST", "/spy/:x"}, func(map[string]any) { calls.Add(1) })
	if err := kerneltest.Agent(ctx, f.k, m, "agent.spy"); err != nil {
		t.Fatal(err)
	}
	type request struct {
		name, path, header, value, contentType, body, where string
	}
	for _, tc := range []request{
		{name: "path segment", path: "/spy/op-token", where: "path"},
		{name: "escaped path segment", path: "/spy/op%2Dtoken", where: "path"},
		{name: "query value", path: "/spy/a?t=op-token", where: "query"},
		{name: "query key", path: "/spy/a?OP-TOKEN=1", where: "query"},
		{name: "header value", path: "/spy/a", header: "X-Forwarded-Token", value: "op-token", where: "headers"},
		{name: "header name", path: "/spy/a", header: "X-Op-Token", value: "1", where: "headers"},
		{name: "json value", path: "/spy/a", body: `{"a":["read-token"]}`, where: "body"},
		{name: "json key", path: "/spy/a", body: `{"read-token":1}`, where: "body"},
		{name: "json escape", path: "/spy/a", body: `{"a":"read\u002dtoken"}`, where: "body"},
		{name: "text body", path: "/spy/a", contentType: "text/plain", body: "x op-token y", where: "body"},
		{name: "clean", path: "/spy/a?q=1", header: "X-Plain", value: "1", body: `{"a":"op-tok"}`},
		{name: "authorization only", path: "/spy/a", header: "Authorization", value: "Bearer op-token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := calls.Load()
			req := httptest.NewRequest("POST", tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if tc.header != "" {
				req.Header.Set(tc.header, tc.value)
			}
			rec := httptest.NewRecorder()
			f.srv.ServeHTTP(rec, req)
			res := result{rec.Code, rec.Header().Get("Content-Type"), strings.TrimSpace(rec.Body.String())}
			if tc.where == "" {
				if res.status != 200 || calls.Load() != before+1 {
					t.Fatalf("got %d %s, want 200 from the agent handler", res.status, res.body)
				}
				return
			}
			kind, msg := errorKind(t, res)
			if res.status != 400 || kind != "validation" || !strings.Contains(msg, "request's "+tc.where+" holds a credential") {
				t.Fatalf("got %d %s, want 400 validation naming the %s", res.status, res.body, tc.where)
			}
			if strings.Contains(res.body, "op-token") || strings.Contains(res.body, "read-token") || calls.Load() != before {
				t.Fatalf("the agent handler ran (%d calls) or the answer echoes the token: %s", calls.Load()-before, res.body)
			}
		})
	}
}
