package kernelruntime

import (
	"strings"
	"testing"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/baseline/budget"
)

// TestKubernetesBudget: spec.budget becomes the container's --budget, in a
// JSON the kernel reads back to the same figures: the two types share one
// shape. Seen failing with k8sConfig leaving Budget out, and with a
// field of api/v1's BudgetAmounts renamed (the kernel refused the flag).
func TestKubernetesBudget(t *testing.T) {
	tenant := &smsv1.Tenant{Spec: smsv1.TenantSpec{Budget: &smsv1.TenantBudget{Period: "month", Currency: "EUR",
		Prices: smsv1.BudgetPrices{InputPerMTokMinor: 300, OutputPerMTokMinor: 1500}, StepEstimateMinor: 7,
		Limits: smsv1.BudgetLimits{Tenant: smsv1.BudgetAmounts{Tokens: 1, CostMinor: 2, WallMillis: 3, Rows: 4},
			User: smsv1.BudgetAmounts{Rows: 5}, Plugin: smsv1.BudgetAmounts{WallMillis: 6}}}}}
	tenant.Name, tenant.Namespace = "a", "b"
	cfg, err := k8sConfig(tenant)
	if err != nil {
		t.Fatal(err)
	}
	var flag string
	for _, a := range cfg.Args() {
		if v, ok := strings.CutPrefix(a, "--budget="); ok {
			flag = v
		}
	}
	got, err := budget.ParseConfig([]byte(flag))
	if err != nil {
		t.Fatalf("the kernel refuses --budget=%s: %v", flag, err)
	}
	l := got.Limits
	if got.Period != "month" || got.Currency != "EUR" || got.Prices.InputPerMTokMinor != 300 || got.Prices.OutputPerMTokMinor != 1500 ||
		got.StepEstimateMinor != 7 || l.Tenant.Tokens != 1 || l.Tenant.CostMinor != 2 || l.Tenant.WallMillis != 3 || l.Tenant.Rows != 4 ||
		l.User.Rows != 5 || l.Plugin.WallMillis != 6 {
		t.Fatalf("the kernel reads --budget=%s as %+v", flag, got)
	}
}
