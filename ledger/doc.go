// Package ledger plans and records multi-step agent runs without ever
// performing a step itself.
//
// The host owns the loop and every effect. It claims a run with
// [Ledger.ClaimRun], asks [Ledger.NextStep] what to do, does that work in its
// own code, and reports what came back with [Ledger.RecordStep]. Work that
// ends before its plan does (an agent turn answered in fewer steps than its
// plan allows) ends with [Ledger.Finish]; work the host stops under a limit
// of its own ends with [Ledger.Halt], with a reason and a detail. The ledger
// has no means of acting on the world, between those calls or at any other
// time: the package imports nothing outside the standard library, no
// networking, process or unsafe package, its exported API accepts no
// callbacks, and its store port has no method whose name implies an outbound
// effect. TestNoTransport enforces this on every test run.
//
// Invariants the package keeps, whatever the [Store]:
//
//  1. Exactly one run per (agent, tenant, period). A second claim for the same
//     key returns the existing run and changes nothing; it is not an error.
//  2. The plan and the terms it was claimed under (agent, tenant, period,
//     ceiling) never change after the claim; stores refuse such an update
//     with [ErrPlanImmutable].
//  3. The next step is derived only from the persisted cursor; nothing is held
//     in memory between calls, so a new [Ledger] over the same store resumes
//     exactly where the previous one stopped.
//  4. The cost ceiling is checked in NextStep before a step is handed out,
//     never after the money is spent.
//  5. A step needing a capability the agent did not declare halts the run with
//     [ReasonCapabilityDenied], naming what was missing.
//  6. Nothing in this package can send, call or execute anything.
//  7. A failed step must carry a failure reason, and every run that ends
//     without success stores a reason and a detail.
//
// Money is always an int64 count of minor units of an ISO 4217 currency; no
// floating-point value is used anywhere. The tenant key is an opaque string:
// it is compared for equality and stored, never parsed or split.
//
// [MemoryStore] is the zero-configuration store and enforces the same
// constraints as the Postgres schema, so tests without a database exercise the
// same rules production does. The Postgres store lives in package pgstore, apart from this
// one, so that the core stays free of any driver.
package ledger
