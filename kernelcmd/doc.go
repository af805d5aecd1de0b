// Package kernelcmd is the public kernel command: it opens one tenant's
// kernel server from the settings of its command line (store, executor,
// model, credentials, users, judge policy) and serves it. An application
// makes its own kernel binary with it, App{Plugins: ...}.Main(), holding
// its domain plugins besides the baseline's; `manager kernel` is the App
// with none, so there is one implementation. The operator's kubernetes
// runtime (which writes the settings into a StatefulSet's arguments, for
// the manager's image or an application's) and its local runtime share
// it, so a kernel behaves the same wherever it runs. docs/applications.md
// states the contract a kernel image meets.
//
// The command chooses its drivers by name from three registries: Models
// and Executors, filled in drivers.go from the drivers' Driver values, and
// Stores (baseline.Stores). Their flags' help, their "want a, b or c"
// errors and `manager dev`'s choices are read from the registries, and the
// registered names are exactly the Tenant API's enum values (a test checks
// them against api/v1 and the CRD), so a tenant can name every driver the
// kernel has and nothing else.
package kernelcmd
