// Package architecture keeps the rings honest. It assigns every package of
// the module a ring from its import path (see Rules) and reports each import
// that points upward or sideways against the table in ARCHITECTURE.md:
//
//	ring 0  kernel                 the standard library only
//	ring 1  contracts              kernel
//	ring 2  plugins/*, judge       kernel, contracts, other plugins' contract.go identifiers
//	ring 2  drivers/*              kernel, contracts, their own third-party library
//	ring 3  baseline               everything above
//	ring 4  cmd/*, controllers, …  anything
//
// The run ledger is an island: its core imports the standard library only.
// So does the admin API's wire contract, plugins/adminapi/adminv1. The
// packages that drive kernels through it (the reconcilers, the operator's
// runtimes but the local one, kubectl sms) link neither the kernel, nor
// the judge, nor goja, not even through a dependency (linkage.go).
// A package the table does not know is itself a violation, so the table
// grows with the tree. TestArchitecture runs the check on the real module.
package architecture
