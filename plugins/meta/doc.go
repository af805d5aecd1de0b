// Package meta is the views, actions and menus system plugin: headless
// descriptions of an application's screens that any front end renders.
//
// Three points take them, all open to agent plugins: view (a model's
// list, form, search or kanban layout, or an extension of another view),
// action (a model opened with a view type and a domain) and menu (a tree
// of entries that open actions). Every item is checked against the ORM
// when it arrives: an unknown model, field, parent view, action or parent
// menu is refused by name, and so is an item past a bound (views per
// model, inheritance depth, menu depth, fields per view). The kernel
// records each item, so disabling the plugin that contributed it removes
// exactly it.
//
// The meta key (readable by agent plugins too) serves the compiled views
// (a primary view with every extension applied in priority order), the
// actions and the menu tree, cut to the models the caller may read.
// There is no view until one is contributed: nothing is generated.
// The RPC plugin serves it over HTTP at /api/rpc/meta.
package meta
