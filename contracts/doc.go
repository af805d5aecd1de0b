// Package contracts is ring 1 of sms: the interfaces drivers implement and
// plugins consume, so neither depends on the other. It imports the kernel and
// the standard library only.
//
// A storage driver provides a [Database]: a small SQL surface (Exec for DDL,
// Query with ? placeholders, Tx, Columns, Close) modelled on database/sql/driver.
// A [Store] adds the kernel's event log and blob store on top of one database
// and owns it.
//
// Invariants every implementation keeps, checked by the conformance kit in
// package storetest:
//
//   - identifiers (table and column names) match [IdentPattern] and are
//     rejected with [ErrInvalidIdent] before any SQL runs; [QuoteIdent] is the
//     only way the contracts build them into SQL;
//   - query arguments are bound, never spliced into SQL text; the only
//     placeholder is ?, in both dialects;
//   - result values have the same Go types in every dialect (see [Row]);
//   - a Tx either commits everything fn did or nothing;
//   - a unique-constraint violation wraps [ErrUnique]; use after Close wraps
//     [ErrClosed]; a cancelled context ends the call with the context's error.
//
// Every model, executor and store driver describes itself in an exported
// Driver value ([ModelDriver], [ExecutorDriver], [StoreDriver]): its name,
// help text, what it needs (settings, key variables) and its constructor.
// A composition root registers the descriptors it links in a [Registry],
// in the order it lists them, and chooses among them by name. The
// descriptors live here, in ring 1, so that drivers can describe
// themselves without importing what chooses among them; no registry is
// filled from an init function, so a binary holds exactly the drivers its
// command names. A Registry refuses a name registered twice, and its
// unknown-name error lists the registered names.
package contracts
