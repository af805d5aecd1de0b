package adminapi

import (
	"context"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// budget answers GET RouteBudget from the kernel's budgets.
func (a *admin) budget(ctx context.Context, _ *smshttp.Request) (*smshttp.Response, error) {
	v, err := a.k.GetValue(contracts.BudgetKey)
	b, ok := v.(contracts.Budgets)
	if err != nil || !ok {
		return nil, smshttp.NewError(smshttp.KindNotFound, "this kernel keeps no budgets")
	}
	r, err := b.Report(ctx)
	if err != nil {
		return nil, err
	}
	out := adminv1.Budget{Period: r.Period, Currency: r.Currency, Tenant: adminv1.BudgetUse(r.Tenant),
		Limits: adminv1.BudgetLimits{Tenant: adminv1.BudgetUse(r.Limits.Tenant), User: adminv1.BudgetUse(r.Limits.User), Plugin: adminv1.BudgetUse(r.Limits.Plugin)},
		Users:  map[string]adminv1.BudgetUse{}, Plugins: map[string]adminv1.BudgetUse{}}
	for name, u := range r.Users {
		out.Users[name] = adminv1.BudgetUse(u)
	}
	for name, u := range r.Plugins {
		out.Plugins[name] = adminv1.BudgetUse(u)
	}
	return answer(out), nil
}
