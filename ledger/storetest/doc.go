// Package storetest is the conformance kit for ledger.Store implementations.
//
// An implementation calls [TestStore] from its own tests. The kit drives the
// store through ledger.Ledger and through the Store methods directly, and
// checks the guarantees every store must keep in storage: one run per (agent,
// tenant, period) under 32 concurrent claims, an immutable plan, resumption
// from the persisted cursor by a fresh ledger over a fresh store value, the
// cost ceiling and capability gates, and reasons on every failure. The same
// kit runs against MemoryStore and the Postgres store, which keeps the
// in-memory store honest about what Postgres allows.
package storetest
