package http_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sms-baseline/sms/kernel/kerneltest"
)

// tokenCase is a request to an agent route and where it holds a token
// ("" when nowhere: the agent handler must answer it).
type tokenCase struct {
	name, path, header, value, contentType, body, where string
}

// A request to an agent route that carries a configured token anywhere but
// the credential headers (a path segment, a query key or value, another
// header's name or value, the body, even JSON-escaped) is refused with a
// 400 before the agent handler runs; the same request without the token,
// or with it only in Authorization, reaches the handler.
// Seen failing without the fix (the refuseTokens call taken out of serve):
// every case but the last two reached the agent handler with a 200.
func TestAgentRoutesRefuseTokensElsewhere(t *testing.T) {
	checkTokenCases(t, []tokenCase{
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
	})
}

// The search also reads through the escapes agent code can undo: JSON
// escapes in a body that is not sent as JSON, percent escapes in a form
// body or a JSON string, escapes inside escapes (a percent-encoded JSON
// document, %252D for %2D) in the path, the query, headers and bodies, and
// JavaScript's %uXXXX. Text with stray escapes and no token still reaches
// the handler.
// Seen failing without the fix (carriesToken reading the body literally
// and as JSON, the path and query once decoded): every case but the last
// three reached the agent handler with a 200.
func TestAgentRoutesRefuseEscapedTokens(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	checkTokenCases(t, []tokenCase{
		{name: "text json escape", path: "/spy/a", contentType: "text/plain", body: `{"k":"op\u002dtoken"}`, where: "body"},
		{name: "text json escape, not json", path: "/spy/a", contentType: "text/plain", body: `x "op\u002dtoken`, where: "body"},
		{name: "text surrogate escapes", path: "/spy/a", contentType: "text/plain", body: `"\u006f\u0070-token"`, where: "body"},
		{name: "form escape", path: "/spy/a", contentType: form, body: "t=op%2Dtoken", where: "body"},
		{name: "form plus and escape", path: "/spy/a", contentType: form, body: "a=1+2&t=%6Fp%2dtoken", where: "body"},
		{name: "form json", path: "/spy/a", contentType: form, body: "d=%7B%22k%22%3A%22op%5Cu002dtoken%22%7D", where: "body"},
		{name: "json percent", path: "/spy/a", body: `{"a":"op%2Dtoken"}`, where: "body"},
		{name: "json double escape", path: "/spy/a", body: `{"a":"op\\u002dtoken"}`, where: "body"},
		{name: "double path", path: "/spy/op%252Dtoken", where: "path"},
		{name: "triple path", path: "/spy/op%25252Dtoken", where: "path"},
		{name: "double query value", path: "/spy/a?t=op%252Dtoken", where: "query"},
		{name: "double query key", path: "/spy/a?OP%252DTOKEN=1", where: "query"},
		{name: "percent-u query", path: "/spy/a?t=op%u002dtoken", where: "query"},
		{name: "escaped header value", path: "/spy/a", header: "X-T", value: "op%2Dtoken", where: "headers"},
		{name: "clean text", path: "/spy/a", contentType: "text/plain", body: `100% \u00 \q op%2Dtok %zz`},
		{name: "clean form", path: "/spy/a?x=%2541", contentType: form, body: "a=1&b=op%2Dtok"},
		{name: "clean json", path: "/spy/a", body: `{"a":"op\u002dtok%25"}`},
	})
}

// checkTokenCases sends each case to an agent route and checks that it is
// refused naming where its token is, or served when it holds none.
func checkTokenCases(t *testing.T, cases []tokenCase) {
	t.Helper()
	f := secured(t)
	var calls atomic.Int32
	m := agentRoute(f, agentRouteSpec{"agent.spy", "POST", "/spy/:x"}, func(map[string]any) { calls.Add(1) })
	if err := kerneltest.Agent(context.Background(), f.k, m, "agent.spy"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
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
