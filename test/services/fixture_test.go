package services

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/baseline/budget"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	"github.com/sms-baseline/sms/plugins/auth"
	smshttp "github.com/sms-baseline/sms/plugins/http"
	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/rbac"
)

const (
	rootLogin    = "root"
	rootPassword = "root-password-1"
	token        = "operator-token"
	readToken    = "reader-token"
)

// invoicing is the application: invoices with a state, and a pay method.
func invoicing() kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.invoicing", Version: "1", Inject: []string{orm.Key},
		Contributes: map[string][]any{
			orm.ModelPoint: {orm.Model{Name: "invoice", Order: "id", DisplayField: "number", Fields: map[string]orm.Field{
				"number": {Kind: orm.KindChar, Required: true},
				"amount": {Kind: orm.KindFloat},
				"note":   {Kind: orm.KindChar},
				"state":  {Kind: orm.KindSelection, Default: "draft", Options: []orm.Option{{Value: "draft"}, {Value: "paid"}}},
			}}},
			orm.MethodPoint: {orm.Method{Model: "invoice", Name: "pay", Handler: func(ctx context.Context, c orm.MethodCall) (any, error) {
				return true, c.Orm.Write(ctx, "invoice", c.IDs, map[string]any{"state": "paid"})
			}}},
		}}}
}

// access: clerks reach their own invoices, managers all of them.
func access() kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.access", Version: "1", Inject: []string{rbac.Key},
		Contributes: map[string][]any{
			rbac.GroupPoint: {rbac.Group{Name: "clerks"}, rbac.Group{Name: "managers", Implies: []string{"clerks"}}},
			rbac.AccessPoint: {
				rbac.Access{Group: "clerks", Model: "invoice", Read: true, Create: true, Write: true},
				rbac.Access{Group: "managers", Model: "invoice", Unlink: true},
			},
			rbac.RulePoint: {
				rbac.Rule{Name: "own invoices", Model: "invoice", Groups: []string{"clerks"},
					Domain: orm.Domain{[]any{orm.FieldCreatedBy, "=", rbac.UID}}},
				rbac.Rule{Name: "all invoices", Model: "invoice", Groups: []string{"managers"}},
			},
		}}}
}

type env struct {
	*baselinetest.Env
	t testing.TB
}

// options are what boot varies.
type options struct {
	store    contracts.Store
	plugins  []kernel.Plugin
	services []string
	approve  bool
	turns    [][]contracts.Block
	svc      baseline.ServiceOptions
	objects  contracts.ObjectStore
	orm      orm.Options
	logger   *slog.Logger
	budget   budget.Config
}

// boot starts a kernel with users on, the invoicing app and every service
// (unless o.services says which).
func boot(t testing.TB, o options) *env {
	t.Helper()
	if o.services == nil {
		o.services = baseline.Services
	}
	e := baselinetest.New(t, baselinetest.Options{Approvals: o.approve, Logger: o.logger, Store: o.store, AdminToken: token, Turns: o.turns,
		Auth:     &auth.Options{Bootstrap: &auth.Bootstrap{Login: rootLogin, Password: rootPassword}, Hash: baselinetest.FastHash},
		Services: o.services, ServiceOptions: o.svc, Objects: o.objects, ORM: o.orm, Budget: o.budget,
		Credentials: []smshttp.Credential{{Name: "reader", Token: readToken, Scopes: []smshttp.Scope{smshttp.ScopeRead}}},
		Plugins:     append([]kernel.Plugin{invoicing(), access()}, o.plugins...)})
	return &env{Env: e, t: t}
}

func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

// user creates a user as root and returns their login headers.
func (e *env) user(login string, groups ...string) http.Header {
	e.t.Helper()
	return e.User(e.Login(rootLogin, rootPassword), login, login+"-password", groups...)
}

// create creates an invoice as h and returns its id.
func (e *env) create(h http.Header, values map[string]any) int64 {
	e.t.Helper()
	r := e.Do("POST", "/api/orm/invoice/create", map[string]any{"values": values}, h)
	if r.Status != 201 {
		e.t.Fatalf("create %v: %d %s", values, r.Status, r.Body)
	}
	return int64(r.JSON.(map[string]any)["id"].(float64))
}

func toolUse(name string, input any) contracts.Block {
	raw, _ := json.Marshal(input)
	return contracts.Block{Type: contracts.BlockToolUse, Name: name, Input: raw}
}

func text(s string) []contracts.Block { return []contracts.Block{{Type: contracts.BlockText, Text: s}} }

// approveAll approves every pending approval with the admin token, bound
// to the code hash it shows.
func (e *env) approveAll() {
	e.t.Helper()
	r := e.Do("GET", adminv1.RouteApprovals, nil, bearer(token))
	var list adminv1.Approvals
	if r.Status != 200 || json.Unmarshal(r.Body, &list) != nil || len(list.Approvals) == 0 {
		e.t.Fatalf("approvals: %d %s", r.Status, r.Body)
	}
	for _, a := range list.Approvals {
		r := e.Do("POST", adminv1.RouteApprovals+"/"+a.ID+"/approve", adminv1.Decision{CodeHash: a.CodeHash}, bearer(token))
		if r.Status != 200 || !strings.Contains(string(r.Body), `"mounted"`) {
			e.t.Fatalf("approve %s: %d %s", a.ID, r.Status, r.Body)
		}
	}
}

// draftsReadable lets clerks read every draft invoice (but write only
// their own) and adds the method close, which pays as sudo: a method whose
// author relies on the caller being allowed to write the records.
func draftsReadable() kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.readonly", Version: "1", Inject: []string{rbac.Key, orm.Key},
		Contributes: map[string][]any{
			rbac.RulePoint: {
				rbac.Rule{Name: "clerks read drafts of all", Model: "invoice", Groups: []string{"clerks"}, Ops: []orm.Action{orm.ActionRead},
					Domain: orm.Domain{[]any{"state", "=", "draft"}}},
			},
			orm.MethodPoint: {orm.Method{Model: "invoice", Name: "close", Handler: func(ctx context.Context, c orm.MethodCall) (any, error) {
				return true, c.Orm.Write(orm.Sudo(ctx), "invoice", c.IDs, map[string]any{"state": "paid"})
			}}},
		}}}
}
