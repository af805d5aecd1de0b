package controllers_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// A Tenant's spec.budget reaches its kernel as it is (the currency and
// the limit show in the kernel's answer), and its status.budget shows
// what the tenant used this period, with the limits it reached: after
// one row written under a one-row tenant limit, used.rows is 1 and rows
// is exceeded. Seen failing with the runtime leaving --budget out (the
// kernel counted in USD) and with budgetStatus left out of tenantStatus.
func TestTenantBudget(t *testing.T) {
	testenv.Need(t)
	w := newWorldPolling(t, time.Second)
	ctx := context.Background()
	tn := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "budgeted", Namespace: w.ns},
		Spec: smsv1.TenantSpec{Judge: smsv1.TenantJudge{AutoApprove: true}, Budget: &smsv1.TenantBudget{
			Currency: "EUR", Limits: smsv1.BudgetLimits{Tenant: smsv1.BudgetAmounts{Rows: 1}}}}}
	w.must(w.admin.Create(ctx, tn))
	w.waitTenant("budgeted", "Ready=T/KernelReady Reconciling=F Stalled=F")
	k := w.kernel("budgeted")
	code := `export default async function activate(cap) {
  await cap.contribute('route', { method: 'POST', path: '/notes', handler: async () => {
    await cap.invoke('collections', 'create', 'note', { text: 'x' })
    return { body: 'written' }
  } })
}`
	v, err := k.Submit(ctx, adminv1.Plugin{Code: code, Manifest: adminv1.Manifest{ID: "agent.notes", Version: "1",
		Inject: []string{"collections"}, Scopes: []string{"db.write"}, Points: []string{"route"},
		Contributes: map[string][]any{"collection": {map[string]any{"name": "note", "fields": []any{map[string]any{"name": "text", "type": "text"}}}}}}}, "")
	if err != nil || v.Status != adminv1.StatusMounted {
		t.Fatalf("submit: %+v, %v", v, err)
	}
	w.must(w.admin.Get(ctx, w.key("budgeted"), tn))
	resp, err := http.Post(tn.Status.Endpoint+"/notes", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /notes = %d", resp.StatusCode)
	}
	w.eventually("status.budget shows the row", func() error {
		if err := w.admin.Get(ctx, w.key("budgeted"), tn); err != nil {
			return err
		}
		b := tn.Status.Budget
		if b == nil || b.Currency != "EUR" || b.Period == "" || b.Used.Rows != 1 || !slices.Equal(b.Exceeded, []string{"rows"}) {
			return fmt.Errorf("status.budget = %+v, want EUR, a period, 1 row used and rows exceeded", b)
		}
		return nil
	})
}
