// Package automation is the automation system plugin: rules that do
// something when records change or as time passes.
//
// The automation point takes an Automation: on create, write or unlink of
// a model (on write, optionally only when a watched field's stored value
// changed, and only for the records that still match a filter domain), or
// every N minutes for the records matching the filter. Its action calls a
// model method, writes values, posts an audit note (a no-op without the
// audit plugin) or runs a handler (an agent plugin's runs in the
// executor).
//
// Who it acts for: a system plugin's automation acts for the writer, or as
// sudo when it says Sudo; an agent plugin's automation acts for the person
// who asked for the plugin, with that person's rights when it fires (the
// same rule as an agent plugin's scheduled jobs and hooks), and may never
// say Sudo. An agent plugin's run is one of the plugin's calls for its
// budget (kernel.Kernel.ActFor): admitted by the kernel's Meter, with the
// rows it writes and its time counted against the plugin and that person.
// The judge's default policy sends an agent's automation to a human.
//
// Bounds: automations per model, the chain depth of automations that
// trigger automations (and an automation never re-enters itself), records
// per run, and a time limit per run. A system plugin's event automation
// runs in the writer's request once the write committed; an agent plugin's
// runs on its own queue (bounded; a full queue drops the run and records
// why), so however slow it is it never slows anyone's writes. Periodic
// automations run when the scheduler ticks; their last runs are kept in
// RunsTable, so a restart neither repeats nor skips one.
package automation
