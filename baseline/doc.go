// Package baseline is ring 3: the composition root that turns the kernel,
// the drivers and the system plugins into one running kernel server.
//
// New installs, in order (systemPlugins): the database key, http,
// collections, scheduler, the ORM; with Options.Auth, auth and rbac (the
// ORM's and the collections' guard, both then closed without it); the
// optional system plugins Options.Services turns on (audit, automation,
// meta, rpc, console; Services lists them); the judge; with a model, the model key and the agent loop; last the admin
// API. Then the application's own
// plugins (Options.Plugins). It restores agent plugins from the event log
// and fails unless every system plugin is active. The result serves HTTP through Handler and runs due
// schedules through Tick.
//
// Invariants:
//   - the store is the only state: a Baseline built on the same store
//     restores exactly the plugins, enabled flags, collections and models that were
//     there before;
//   - Handler always dispatches to the http plugin active at the time of the
//     request, so a re-activated http plugin is served without a restart;
//   - Close closes what New opened, once;
//   - Serve bounds every listener: header, read, write and idle timeouts
//     (streams exempt), at most ServeOptions.MaxConnections connections
//     held at once, and at most ServeOptions.MaxConnectionsPerAddress of
//     them from one client, so that one client cannot starve the probes.
//
// OpenStore opens a store from a spec through Stores, the registry of
// store drivers (sqlite, postgres) chosen by the spec's scheme.
package baseline
