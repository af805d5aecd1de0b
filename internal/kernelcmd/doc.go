// Package kernelcmd opens one tenant's kernel server from the settings of
// `manager kernel`: its store, executor, model and judge policy. The
// command, the operator's kubernetes runtime (which writes the settings
// into a StatefulSet's arguments) and its local runtime (which runs
// kernels inside the manager's process) share it, so a kernel behaves the
// same wherever it runs.
//
// The command chooses its drivers by name from three registries: Models
// and Executors, filled in drivers.go from the drivers' Driver values, and
// Stores (baseline.Stores). Their flags' help, their "want a, b or c"
// errors and `manager dev`'s choices are read from the registries, and the
// registered names are exactly the Tenant API's enum values (a test checks
// them against api/v1 and the CRD), so a tenant can name every driver the
// kernel has and nothing else.
package kernelcmd
