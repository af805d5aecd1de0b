// Package budget accounts agent work against the tenant's budgets, per
// tenant, per user and per agent plugin, and runs it through the run
// ledger.
//
// Three things are counted in each period (a day or a month, UTC): model
// tokens with their cost in integer minor units, wall time spent in agent
// code, and rows written on agent code's behalf. They form a hierarchy: a
// plugin's use counts against the plugin, against the user who asked for it
// (the kernel's RequestedBy) and against the tenant; a chat turn's tokens
// count against its user and the tenant.
//
// The Meter is the kernel's kernel.Meter: the kernel asks it before every
// call into agent code and every service call that code makes, and a plugin,
// a user or a tenant past a limit has its agent code's calls refused with
// kernel.CodeBudget, and one budget/exceeded event per scope, limit and
// period. System plugins are never refused.
//
// The plugin provides contracts.BudgetKey (system only). A chat turn or a
// scheduled job claims a run of the ledger (package ledger) with Begin; the
// run's plan is a fixed number of steps, each estimated at
// Config.StepEstimateMinor, under a ceiling of the money its user and the
// tenant have left. The ledger halts the work before a step that would
// cross it; a token limit halts it through Ledger.Halt. Either way the
// reason reaches the user and a budget/halted event records it.
//
// Who owns what: the ledger owns each run and the spend of its steps; the
// Meter owns the period's usage, which it keeps in memory and writes to the
// tenant's database (table budget_usage) every second and when the plugin
// stops, so a restarted kernel goes on counting where it stopped (a crash
// loses at most the last second of wall time). The limits are the Config's,
// which the kernel command reads from --budget and the operator writes from
// the Tenant's spec.budget.
package budget
