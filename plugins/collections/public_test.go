package collections_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/kernel/kerneltest"
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// With a credential configured, the REST API needs the read scope to read
// and the admin scope to write, except for a collection a system plugin
// declared public. Seen failing (200 without a token) with the Scope left
// off the record routes, and (401 on the guestbook) with public answering
// false.
func TestRESTNeedsACredentialUnlessPublic(t *testing.T) {
	opts := smshttp.Options{Credentials: []smshttp.Credential{
		{Name: "reader", Token: "r", Scopes: []smshttp.Scope{smshttp.ScopeRead}},
		{Name: "writer", Token: "w", Scopes: []smshttp.Scope{smshttp.ScopeAdmin}},
	}}
	guestbook := app("app.guestbook", map[string][]any{collections.CollectionPoint: {collections.Collection{Name: "guestbook",
		Public: true, Fields: []collections.Field{{Name: "message", Type: collections.TypeText}}}}})
	f := bootWith(t, opts, openSQLite(t), invoiceApp(), guestbook)
	cases := []struct {
		method, path, token, body string
		want                      int
	}{
		{"GET", "/api/collections/invoice", "", "", 401},
		{"POST", "/api/collections/invoice", "", `{"customer":"x","amount":1}`, 401},
		{"GET", "/api/collections/invoice", "r", "", 200},
		{"POST", "/api/collections/invoice", "r", `{"customer":"x","amount":1}`, 403},
		{"POST", "/api/collections/invoice", "w", `{"customer":"x","amount":1}`, 201},
		{"DELETE", "/api/collections/invoice/1", "", "", 401},
		{"GET", "/api/collections", "", "", 401},
		{"POST", "/api/collections/guestbook", "", `{"message":"hi"}`, 201},
		{"GET", "/api/collections/guestbook/1", "", "", 200},
	}
	for _, c := range cases {
		hr := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		hr.Header.Set("Content-Type", "application/json")
		if c.token != "" {
			hr.Header.Set("Authorization", "Bearer "+c.token)
		}
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, hr)
		if rec.Code != c.want {
			t.Errorf("%s %s with token %q = %d %s, want %d", c.method, c.path, c.token, rec.Code, rec.Body, c.want)
		}
	}
}

// Only system plugins may declare a collection public: an agent plugin's
// public collection is refused, so no unapproved plugin opens data to
// anyone. Seen failing with the trust check removed from validateCollection.
func TestAgentCannotDeclareAPublicCollection(t *testing.T) {
	f := boot(t, openSQLite(t))
	f.exec.Register("noop", func(context.Context, kernel.HostBridge, *kerneltest.Unit) error { return nil })
	m := kernel.Manifest{ID: "agent.leak", Version: "1", Contributes: map[string][]any{collections.CollectionPoint: {
		map[string]any{"name": "leak", "public": true, "fields": []any{map[string]any{"name": "v", "type": "text"}}}}}}
	err := kerneltest.Agent(context.Background(), f.k, m, "noop")
	if kernel.CodeOf(err) != kernel.CodeValidation || !strings.Contains(err.Error(), "only system plugins may declare a collection public") {
		t.Fatalf("an agent's public collection: error %v, want a validation error", err)
	}
}
