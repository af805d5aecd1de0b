package identity

import (
	"net/http"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/auth"
	"github.com/sms-baseline/sms/plugins/collections"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/rbac"
)

const (
	rootLogin    = "root"
	rootPassword = "root-password-1"
	token        = "operator-token"
	readToken    = "reader-token"
	chatToken    = "chatter-token"
	approveToken = "approver-token"
)

// invoicing is the application under test: an invoice model and a notes
// collection.
func invoicing() kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.invoicing", Version: "1", Inject: []string{orm.Key, collections.Key},
		Contributes: map[string][]any{
			orm.ModelPoint: {orm.Model{Name: "invoice", Fields: map[string]orm.Field{
				"number": {Kind: orm.KindChar, Required: true},
				"amount": {Kind: orm.KindFloat},
			}}},
			collections.CollectionPoint: {
				collections.Collection{Name: "notes", Fields: []collections.Field{{Name: "text", Type: "text"}}},
				collections.Collection{Name: "news", Public: true, Fields: []collections.Field{{Name: "text", Type: "text"}}},
			},
		}}}
}

// invoicingAccess is who may do what in it: clerks reach their own
// invoices, managers all of them (and read notes).
func invoicingAccess() kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.invoicing-access", Version: "1", Inject: []string{rbac.Key},
		Contributes: map[string][]any{
			rbac.GroupPoint: {
				rbac.Group{Name: "clerks"},
				rbac.Group{Name: "managers", Implies: []string{"clerks"}},
			},
			rbac.AccessPoint: {
				rbac.Access{Group: "clerks", Model: "invoice", Read: true, Create: true, Write: true},
				rbac.Access{Group: "managers", Model: "invoice", Unlink: true},
				rbac.Access{Group: "managers", Collection: "notes", Read: true},
			},
			rbac.RulePoint: {
				rbac.Rule{Name: "own invoices", Model: "invoice", Groups: []string{"clerks"},
					Domain: orm.Domain{[]any{orm.FieldCreatedBy, "=", rbac.UID}}},
				rbac.Rule{Name: "all invoices", Model: "invoice", Groups: []string{"managers"}},
			},
		}}}
}

// env is a kernel with auth on and the invoicing app.
type env struct {
	*baselinetest.Env
	t testing.TB
}

func boot(t testing.TB, store contracts.Store, opts auth.Options) *env {
	t.Helper()
	if opts.Bootstrap == nil {
		opts.Bootstrap = &auth.Bootstrap{Login: rootLogin, Password: rootPassword}
	}
	if opts.Hash == (auth.HashParams{}) {
		opts.Hash = baselinetest.FastHash
	}
	turns := make([][]contracts.Block, 32) // replies for the chat cells of the matrix
	for i := range turns {
		turns[i] = []contracts.Block{{Type: contracts.BlockText, Text: "ok"}}
	}
	e := baselinetest.New(t, baselinetest.Options{Approvals: true, Auth: &opts, Store: store, AdminToken: token, Turns: turns,
		Credentials: []smshttp.Credential{
			{Name: "reader", Token: readToken, Scopes: []smshttp.Scope{smshttp.ScopeRead}},
			{Name: "chatter", Token: chatToken, Scopes: []smshttp.Scope{smshttp.ScopeChat}},
			{Name: "approver", Token: approveToken, Scopes: []smshttp.Scope{smshttp.ScopeApprove}},
		},
		Plugins: []kernel.Plugin{invoicing(), invoicingAccess()}})
	return &env{Env: e, t: t}
}

// bearer is the headers of a credential.
func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

// user creates a user as root and returns their login headers.
func (e *env) user(login string, groups ...string) http.Header {
	e.t.Helper()
	return e.User(e.Login(rootLogin, rootPassword), login, login+"-password", groups...)
}
