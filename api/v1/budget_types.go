package v1

// TenantBudget is a tenant's budget. Its JSON is the kernel's --budget
// flag as it is (the operator passes it through), so the kernel's own
// validation has the last word; the bounds here refuse at admission what
// the kernel would refuse at boot.
type TenantBudget struct {
	// Period is what usage is counted over, in UTC: day (the default) or
	// month.
	// +kubebuilder:validation:Enum=day;month
	// +optional
	Period string `json:"period,omitempty"`
	// Currency is the ISO 4217 code of costs; default USD.
	// +kubebuilder:validation:Pattern=`^[A-Z]{3}$`
	// +optional
	Currency string `json:"currency,omitempty"`
	// Prices turn the model's tokens into cost.
	// +optional
	Prices BudgetPrices `json:"prices,omitempty"`
	// StepEstimateMinor is what one step of agent work (a model call, a
	// tool call) may cost at most, in minor units: the run ledger hands a
	// step out only while this much money is left.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1125899906842624
	// +optional
	StepEstimateMinor int64 `json:"stepEstimateMinor,omitempty"`
	// Limits per tenant, per user and per agent plugin; a 0 or missing
	// figure is no limit.
	// +optional
	Limits BudgetLimits `json:"limits,omitempty"`
}

// BudgetPrices are the model's prices in minor units per million tokens.
type BudgetPrices struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=268435456
	// +optional
	InputPerMTokMinor int64 `json:"inputPerMTokMinor,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=268435456
	// +optional
	OutputPerMTokMinor int64 `json:"outputPerMTokMinor,omitempty"`
}

// BudgetLimits are a budget's limits in its hierarchy: the tenant's use
// includes each user's, and a user's each plugin they asked for.
// +kubebuilder:validation:XValidation:rule="!has(self.plugin) || ((!has(self.plugin.tokens) || self.plugin.tokens == 0) && (!has(self.plugin.costMinor) || self.plugin.costMinor == 0))",message="limits.plugin takes wallMillis and rows only: agent plugins never call the model"
type BudgetLimits struct {
	// +optional
	Tenant BudgetAmounts `json:"tenant,omitempty"`
	// User applies to each user (and credential) on their own.
	// +optional
	User BudgetAmounts `json:"user,omitempty"`
	// Plugin applies to each agent plugin on its own: wallMillis and rows
	// only.
	// +optional
	Plugin BudgetAmounts `json:"plugin,omitempty"`
}

// BudgetAmounts are amounts of what a budget counts.
type BudgetAmounts struct {
	// Tokens are model tokens, input and output.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1125899906842624
	// +optional
	Tokens int64 `json:"tokens,omitempty"`
	// CostMinor is model cost in minor units of the currency.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1125899906842624
	// +optional
	CostMinor int64 `json:"costMinor,omitempty"`
	// WallMillis is wall time in agent code, in milliseconds.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1125899906842624
	// +optional
	WallMillis int64 `json:"wallMillis,omitempty"`
	// Rows are rows written on agent code's behalf.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1125899906842624
	// +optional
	Rows int64 `json:"rows,omitempty"`
}

// TenantBudgetStatus is what the tenant used in its budget's current
// period. The kernel owns the count; the operator copies it at each poll,
// at most once per status-write interval.
type TenantBudgetStatus struct {
	// Period is the current period (2026-12-05, or 2026-12 for a monthly
	// budget).
	Period string `json:"period"`
	// Currency is the currency of CostMinor.
	// +optional
	Currency string `json:"currency,omitempty"`
	// Used is what the whole tenant used.
	Used BudgetAmounts `json:"used"`
	// Exceeded names the tenant's limits reached (tokens, costMinor,
	// wallMillis, rows): its agent work is refused until the period turns.
	// +optional
	Exceeded []string `json:"exceeded,omitempty"`
}
